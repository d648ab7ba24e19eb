#pragma once
// Label Studio's ML-backend endpoints on `t5studio serve` (labelstudio.cpp).
#include <string>

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace t5s::serve {

class Service;

// The tags a labeling config must have: <Text name=N value="$FIELD"/> and <TextArea toName=N/>.
struct LabelConfig {
    std::string input_name, input_field;  // the Text tag's name and its data field
    std::string output_name, output_to;   // the TextArea's name and toName
};
// Throws Error(InvalidArgument) naming what is supported and the tags the config has.
LabelConfig parse_label_config(const std::string& xml);

bool is_labelstudio_path(const std::string& path);  // /, /setup, /predict, /webhook, /train
// HTTP Basic (--basic-auth-file, as Label Studio sends it) or the Bearer key; true when neither is set.
bool labelstudio_authorized(const httplib::Request& req, const Service& svc);
void install_labelstudio_routes(httplib::Server& server, Service& svc);

}  // namespace t5s::serve
