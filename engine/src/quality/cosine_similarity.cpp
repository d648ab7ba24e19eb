#include <cmath>

#include "t5s/embedder.h"
#include "t5s/error.h"

namespace t5s {

double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size())
        throw Error(ErrorCode::InvalidArgument, "cosine_similarity: embeddings of sizes " + std::to_string(a.size()) + " and " +
                                                    std::to_string(b.size()));
    double dot = 0.0, na = 0.0, nb = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        dot += double(a[i]) * double(b[i]);
        na += double(a[i]) * double(a[i]);
        nb += double(b[i]) * double(b[i]);
    }
    if (na == 0.0 || nb == 0.0) return 0.0;
    return std::max(-1.0, std::min(1.0, dot / (std::sqrt(na) * std::sqrt(nb))));
}

}  // namespace t5s
