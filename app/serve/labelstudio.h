#pragma once
// Label Studio's ML-backend endpoints on `t5studio serve` (labelstudio.cpp).
#include <string>

#include "serve/label_config.h"  // LabelConfig, parse_label_config

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace t5s::serve {

class Service;

bool is_labelstudio_path(const std::string& path);  // /, /setup, /predict, /webhook, /train
// HTTP Basic (--basic-auth-file, as Label Studio sends it) or the Bearer key; true when neither is set.
bool labelstudio_authorized(const httplib::Request& req, const Service& svc);
void install_labelstudio_routes(httplib::Server& server, Service& svc);

}  // namespace t5s::serve
