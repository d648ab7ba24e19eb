#pragma once
// Label Studio's ML-backend endpoints on `t5studio serve` (labelstudio.cpp).
#include <string>

#include "serve/label_config.h"  // LabelConfig, parse_label_config

namespace httplib {
class Server;
}  // namespace httplib

namespace t5s::serve {

class Service;

void install_labelstudio_routes(httplib::Server& server, Service& svc);

}  // namespace t5s::serve
