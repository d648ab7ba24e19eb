// spiece.model files mutated from the genuine T5 model ("crashes"): an overlong piece, a
// corrupt normalizer character map, bad pieces, truncation and random byte damage each give one
// line naming the file, or load and work; never a crash (test_core_asan runs this under ASan).
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "t5s/error.h"
#include "t5s/tokenizer.h"
#include "text/spiece_validate.h"

using namespace t5s;

namespace {

const std::string kName = "mutated/spiece.model";

std::string real_model() {
    std::ifstream in(std::string(T5S_TEST_DATA) + "/t5-spiece/spiece.model", std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// --- a minimal protobuf writer/reader, enough to rebuild a ModelProto with one field changed ---
void put_varint(std::string* out, uint64_t v) {
    do {
        out->push_back(static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0)));
        v >>= 7;
    } while (v);
}
void put_bytes(std::string* out, int field, const std::string& bytes) {
    put_varint(out, static_cast<uint64_t>(field) << 3 | 2);
    put_varint(out, bytes.size());
    *out += bytes;
}
uint64_t get_varint(const std::string& s, size_t* pos) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        const auto b = static_cast<unsigned char>(s[(*pos)++]);
        v |= static_cast<uint64_t>(b & 0x7F) << shift;
        if (!(b & 0x80)) return v;
    }
}
struct RawField {
    int number, wire_type;
    std::string raw;    // the whole field as it was written
    std::string bytes;  // payload of a length-delimited field
};
std::vector<RawField> fields_of(const std::string& msg) {
    std::vector<RawField> out;
    for (size_t pos = 0; pos < msg.size();) {
        const size_t start = pos;
        const uint64_t key = get_varint(msg, &pos);
        RawField f{static_cast<int>(key >> 3), static_cast<int>(key & 7), "", ""};
        if (f.wire_type == 0) get_varint(msg, &pos);
        else if (f.wire_type == 5) pos += 4;
        else if (f.wire_type == 1) pos += 8;
        else {
            const uint64_t n = get_varint(msg, &pos);
            f.bytes = msg.substr(pos, n);
            pos += n;
        }
        f.raw = msg.substr(start, pos - start);
        out.push_back(f);
    }
    return out;
}

// The model with piece `index` replaced by `piece` (type kept) or with the normalizer's
// precompiled_charsmap passed through `edit`.
std::string with_piece(const std::string& model, size_t index, const std::string& piece, int type = 1) {
    std::string out;
    size_t seen = 0;
    for (const auto& f : fields_of(model)) {
        if (f.number == 1 && seen++ == index) {
            std::string p;
            put_bytes(&p, 1, piece);
            p += std::string("\x15\0\0\0\0", 5);  // score 0.0
            p.push_back(0x18);                    // type
            put_varint(&p, static_cast<uint64_t>(type));
            put_bytes(&out, 1, p);
        } else {
            out += f.raw;
        }
    }
    return out;
}
template <class Edit>
std::string with_charsmap(const std::string& model, Edit edit) {
    std::string out;
    for (const auto& f : fields_of(model)) {
        if (f.number != 3) {
            out += f.raw;
            continue;
        }
        std::string spec;
        for (const auto& g : fields_of(f.bytes)) {
            if (g.number == 2) {
                std::string map = g.bytes;
                edit(map);
                put_bytes(&spec, 2, map);
            } else {
                spec += g.raw;
            }
        }
        put_bytes(&out, 3, spec);
    }
    return out;
}

std::string error_of(const std::string& model) {
    try {
        Tokenizer t = Tokenizer::from_serialized(model, kName);
        const auto ids = t.encode("Hello world, ｈｅｌｌｏ ① ＡＢＣ ﬁ — naïve café <extra_id_0>.");
        (void)t.decode(ids);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void set_unit(std::string& map, size_t unit, uint32_t value) { std::memcpy(&map[4 + 4 * unit], &value, 4); }

}  // namespace

TEST_CASE("spiece: the genuine model passes validation unchanged", "[tokenizer][spiece]") {
    const std::string model = real_model();
    REQUIRE(model.size() > 700000);
    CHECK_NOTHROW(validate_spiece_model(model, kName));
    CHECK(error_of(model).empty());
    CHECK(error_of(with_charsmap(model, [](std::string&) {})).empty());  // the rebuilder itself is faithful
}

TEST_CASE("spiece: overlong and malformed pieces are refused before SentencePiece sees them", "[tokenizer][spiece][errors]") {
    const std::string model = real_model();
    // The reproducer (~110k characters: SIGSEGV in the library's trie builder).
    CHECK(error_of(with_piece(model, 100, std::string(110000, 'a'))) ==
          kName + ": not a valid SentencePiece model (piece 100 is 110000 bytes long, more than the 4096 accepted)");
    CHECK(error_of(with_piece(model, 100, std::string(kMaxSpiecePieceBytes, 'a'))).empty());  // the limit itself loads
    CHECK(error_of(with_piece(model, 7, "")).find("piece 7 is empty") != std::string::npos);
    CHECK(error_of(with_piece(model, 7, std::string("a\0b", 3))).find("piece 7 contains a NUL byte") != std::string::npos);
    CHECK(error_of(with_piece(model, 7, "\xff\xfe")).find("piece 7: invalid UTF-8 at byte 0") != std::string::npos);
    // 65 user-defined pieces, each a prefix of the next: past the library's 64-match buffer.
    std::string nested = model;
    for (int i = 0; i < 65; ++i) nested = with_piece(nested, 1000 + i, std::string(i + 1, 'q'), /*USER_DEFINED=*/4);
    CHECK(error_of(nested).find("more than 64 user-defined pieces are prefixes") != std::string::npos);
}

TEST_CASE("spiece: a corrupt normalizer character map is refused", "[tokenizer][spiece][errors]") {
    const std::string model = real_model();
    auto charsmap_error = [&](auto edit) { return error_of(with_charsmap(model, edit)); };
    CHECK(charsmap_error([](std::string& m) { m.resize(3); }).find("shorter than its size prefix") != std::string::npos);
    CHECK(charsmap_error([](std::string& m) {
              const uint32_t huge = static_cast<uint32_t>(m.size());
              std::memcpy(&m[0], &huge, 4);
          }).find("exceeds the map") != std::string::npos);
    // The trie cut to 300 units: its nodes point past the end.
    const std::string cut_error = charsmap_error([](std::string& m) {
        const uint32_t cut = 300 * 4;
        std::memcpy(&m[0], &cut, 4);
    });
    INFO(cut_error);
    CHECK(cut_error.find("outside the trie") != std::string::npos);
    // The replacement strings cut off: values point past the last NUL.
    CHECK(charsmap_error([](std::string& m) { m.resize(m.size() - 30000); }).find("outside the map") != std::string::npos);
    // The root's offset pointing far outside the trie.
    CHECK(charsmap_error([](std::string& m) { set_unit(m, 0, 0xFFFFFC00u); }).find("outside the trie") != std::string::npos);
}

TEST_CASE("spiece: random byte damage never crashes", "[tokenizer][spiece][errors]") {
    const std::string model = real_model();
    std::mt19937 rng(16);
    int rejected = 0, loaded = 0;
    for (int round = 0; round < 60; ++round) {
        std::string damaged = model;
        const int flips = 1 + round % 8;
        for (int k = 0; k < flips; ++k) damaged[rng() % damaged.size()] = static_cast<char>(rng());
        if (round % 10 == 9) damaged.resize(rng() % damaged.size());  // truncated as well
        const std::string error = error_of(damaged);
        if (error.empty()) {
            ++loaded;
            continue;
        }
        INFO(error);
        CHECK(error.rfind(kName + ": ", 0) == 0);
        CHECK(error.find('\n') == std::string::npos);
        ++rejected;
    }
    CHECK(rejected + loaded == 60);
    CHECK(rejected > 0);
}

namespace {

// The model with one varint field of its trainer_spec (2) or name of its normalizer_spec (3)
// replaced.
std::string with_spec_field(const std::string& model, int spec, int number, uint64_t varint, const std::string& text = {}) {
    std::string out;
    for (const auto& f : fields_of(model)) {
        if (f.number != spec) {
            out += f.raw;
            continue;
        }
        std::string body;
        for (const auto& g : fields_of(f.bytes)) {
            if (g.number != number) body += g.raw;
        }
        if (text.empty()) {
            put_varint(&body, static_cast<uint64_t>(number) << 3);
            put_varint(&body, varint);
        } else {
            put_bytes(&body, number, text);
        }
        put_bytes(&out, spec, body);
    }
    return out;
}

}  // namespace

TEST_CASE("spiece: a bad trainer spec, piece type or normalizer name is refused naming it", "[tokenizer][spiece][errors]") {
    const std::string model = real_model();
    const uint64_t minus_one = ~uint64_t{0};  // int32 -1 on the wire: sign-extended to 64 bits
    CHECK_THAT(error_of(with_spec_field(model, 2, 3, 9)), Catch::Contains("trainer_spec.model_type 9"));
    CHECK_THAT(error_of(with_spec_field(model, 2, 40, 32000)),
               Catch::Contains("trainer_spec.unk_id 32000 is outside the 32000 pieces"));
    CHECK_THAT(error_of(with_spec_field(model, 2, 40, minus_one)), Catch::Contains("unk_id must name a piece"));
    CHECK_THAT(error_of(with_spec_field(model, 2, 43, 1u << 20)), Catch::Contains("trainer_spec.pad_id"));
    CHECK(error_of(with_spec_field(model, 2, 41, minus_one)).empty());  // bos disabled, as in T5: fine
    CHECK_THAT(error_of(with_piece(model, 5, "\xE2\x96\x81x", 9)), Catch::Contains("piece 5 has unknown type 9"));
    CHECK_THAT(error_of(with_spec_field(model, 3, 1, 0, "nfkd_magic")),
               Catch::Contains("normalizer_spec.name: unknown normalizer 'nfkd_magic'"));
    CHECK(error_of(with_spec_field(model, 3, 1, 0, "nfkc")).empty());
    for (const std::string& bad : {with_spec_field(model, 2, 3, 9), with_piece(model, 5, "x", 0)})
        CHECK_THAT(error_of(bad), Catch::StartsWith(kName));
}
