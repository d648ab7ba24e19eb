// A Unigram tokenizer.json written as a SentencePiece ModelProto (protobuf wire format by hand;
// field numbers from sentencepiece_model.proto), so that the SentencePiece library runs it.
#include <cstdint>
#include <cstring>
#include <set>

#include "text/tokenizer_json.h"

namespace t5s {
namespace {

// ModelProto.SentencePiece.Type
enum PieceType : uint64_t { kNormal = 1, kUnknown = 2, kControl = 3, kByte = 6 };

void put_varint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}
void put_key(std::string& out, uint32_t field, int wire_type) { put_varint(out, (uint64_t{field} << 3) | wire_type); }
void put_uint(std::string& out, uint32_t field, uint64_t v) {
    put_key(out, field, 0);
    put_varint(out, v);
}
void put_int(std::string& out, uint32_t field, int64_t v) { put_uint(out, field, static_cast<uint64_t>(v)); }
void put_bytes(std::string& out, uint32_t field, const std::string& bytes) {
    put_key(out, field, 2);
    put_varint(out, bytes.size());
    out += bytes;
}
void put_float(std::string& out, uint32_t field, float v) {
    put_key(out, field, 5);
    char b[4];
    std::memcpy(b, &v, 4);  // little-endian hosts only (x86-64, aarch64)
    out.append(b, 4);
}

bool is_byte_piece(const std::string& p) {
    auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
    return p.size() == 6 && p.compare(0, 3, "<0x") == 0 && hex(p[3]) && hex(p[4]) && p[5] == '>';
}

std::string piece_message(const TokenizerJson& tj, size_t id, const std::set<int>& control) {
    const auto& [text, score] = tj.pieces[id];
    uint64_t type = kNormal;
    if (static_cast<int>(id) == tj.unk_id) type = kUnknown;
    else if (control.count(static_cast<int>(id))) type = kControl;
    else if (tj.byte_fallback && is_byte_piece(text)) type = kByte;
    std::string m;
    put_bytes(m, 1, text);
    put_float(m, 2, static_cast<float>(score));
    put_uint(m, 3, type);
    return m;
}

int find_piece(const TokenizerJson& tj, size_t count, const char* text) {
    for (size_t i = 0; i < count && i < 8; ++i) {
        if (tj.pieces[i].first == text) return static_cast<int>(i);
    }
    return -1;
}

}  // namespace

std::string unigram_to_spiece_model(const TokenizerJson& tj, size_t count, bool add_dummy_prefix) {
    std::set<int> control;  // special added tokens inside the model's pieces
    for (const auto& a : tj.added_tokens) {
        if (a.special && a.id != tj.unk_id) control.insert(a.id);
    }
    std::string model;
    for (size_t id = 0; id < count; ++id) put_bytes(model, 1, piece_message(tj, id, control));

    std::string trainer;
    put_uint(trainer, 3, 1);  // model_type UNIGRAM
    put_uint(trainer, 4, count);
    put_uint(trainer, 35, tj.byte_fallback ? 1 : 0);
    put_int(trainer, 40, tj.unk_id);
    put_int(trainer, 41, find_piece(tj, count, "<s>"));
    put_int(trainer, 42, find_piece(tj, count, "</s>"));
    put_int(trainer, 43, find_piece(tj, count, "<pad>"));
    put_bytes(model, 2, trainer);

    // No char map: the text arrives normalised by PrecompiledNormalizer, which reads the map the
    // way the `tokenizers` library does (SentencePiece's own reading differs on some clusters).
    std::string normalizer;
    put_bytes(normalizer, 1, "identity");
    put_uint(normalizer, 3, add_dummy_prefix ? 1 : 0);
    put_uint(normalizer, 4, tj.metaspace.collapse_spaces ? 1 : 0);
    put_uint(normalizer, 5, 1);  // escape_whitespaces: Metaspace's "▁"
    put_bytes(model, 3, normalizer);
    return model;
}

}  // namespace t5s
