#include "text/spiece_validate.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <set>
#include <vector>

#include "t5s/error.h"
#include "t5s/tokenizer.h"

namespace t5s {
namespace {

[[noreturn]] void corrupt(const std::string& file, const std::string& what) {
    throw Error(ErrorCode::CorruptFile, file + ": not a valid SentencePiece model (" + what + ")");
}

// One field of the protobuf wire format: number, wire type, and its payload.
struct Field {
    uint32_t number = 0;
    int wire_type = 0;
    uint64_t varint = 0;     // wire type 0
    std::string_view bytes;  // wire type 2 (length-delimited)
};

// Reads the fields of one message in order; every length is checked against the bytes left.
class WireReader {
public:
    WireReader(std::string_view data, const std::string& file, const char* message)
        : data_(data), file_(file), message_(message) {}

    bool next(Field* f) {
        if (pos_ == data_.size()) return false;
        const uint64_t key = varint();
        f->number = static_cast<uint32_t>(key >> 3);
        f->wire_type = static_cast<int>(key & 7);
        if (key >> 3 == 0 || key >> 3 > 536870911) fail("invalid field number");
        switch (f->wire_type) {
            case 0: f->varint = varint(); break;
            case 1: skip(8); break;
            case 5: skip(4); break;
            case 2: {
                const uint64_t n = varint();
                if (n > data_.size() - pos_) fail("a length-delimited field runs past its end");
                f->bytes = data_.substr(pos_, n);
                pos_ += n;
                break;
            }
            default: fail("unsupported protobuf wire type " + std::to_string(f->wire_type));
        }
        return true;
    }

private:
    [[noreturn]] void fail(const std::string& what) const { corrupt(file_, std::string(message_) + ": " + what); }
    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (pos_ >= data_.size()) fail("truncated varint");
            const auto b = static_cast<unsigned char>(data_[pos_++]);
            if (shift == 63 && b > 1) fail("varint overflows 64 bits");
            v |= static_cast<uint64_t>(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
        fail("varint longer than 10 bytes");
    }
    void skip(size_t n) {
        if (n > data_.size() - pos_) fail("truncated fixed-size field");
        pos_ += n;
    }
    std::string_view data_;
    size_t pos_ = 0;
    const std::string& file_;
    const char* message_;
};

// darts-clone's unit layout (third_party/darts_clone/darts.h in SentencePiece).
uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1U << 9)) >> 6); }
bool unit_has_leaf(uint32_t u) { return (u >> 8) & 1; }
uint32_t unit_value(uint32_t u) { return u & ((1U << 31) - 1); }
uint32_t unit_label(uint32_t u) { return u & ((1U << 31) | 0xFF); }

// Walks every state Darts::DoubleArray::commonPrefixSearch can reach in the normalizer's trie and
// checks each array read it would make, so that no input text can make the library read outside
// the map (blob layout: uint32 trie size, trie units, NUL-terminated replacement strings).
void check_charsmap(std::string_view blob, const std::string& file, const char* spec) {
    if (blob.empty()) return;  // no map: the library skips it
    auto bad = [&](const std::string& what) { corrupt(file, std::string(spec) + ".precompiled_charsmap: " + what); };
    uint32_t trie_bytes = 0;
    if (blob.size() <= 4) bad("shorter than its size prefix");
    std::memcpy(&trie_bytes, blob.data(), 4);
    if (trie_bytes > blob.size() - 4) bad("trie size " + std::to_string(trie_bytes) + " exceeds the map");
    const size_t units = trie_bytes / 4;
    if (units < 256) bad("trie has fewer than 256 units");
    std::vector<uint32_t> unit(units);
    std::memcpy(unit.data(), blob.data() + 4, units * 4);
    const std::string_view normalized = blob.substr(4 + static_cast<size_t>(trie_bytes));
    const size_t last_nul = normalized.rfind('\0');
    constexpr int kMaxMatches = 32;  // Normalizer::kMaxTrieResultsSize: results past it are read off the stack

    // darts-clone shares suffix subtrees (it is built from a DAWG), so the reachable nodes form a
    // DAG: a depth-first walk with memoised "most matches below this node" checks every base once
    // and finds the path with the most matches (a cycle cannot come from the builder: refused).
    enum : uint8_t { kNew, kOpen, kDone };
    std::vector<uint8_t> state(units, kNew);
    std::vector<uint8_t> most_below(units, 0);
    struct Frame {
        uint32_t base;  // node_pos after the XOR with the unit's offset: children are at base ^ c
        uint32_t c;     // next byte to try
        int best;       // most matches on a path below, so far
    };
    auto open = [&](uint32_t base) {
        // Every child read is unit[base ^ c] for a byte c, made before its label is compared.
        if ((static_cast<size_t>(base) | 0xFF) >= units) bad("a trie node points outside the trie");
        state[base] = kOpen;
    };
    auto leaf_of = [&](uint32_t child) -> int {
        const uint32_t u = unit[child];
        if (!unit_has_leaf(u)) return 0;
        const uint32_t value_at = child ^ unit_offset(u);
        if (value_at >= units) bad("a trie leaf points outside the trie");
        const uint32_t value = unit_value(unit[value_at]);
        if (last_nul == std::string_view::npos || value > last_nul) bad("a replacement string lies outside the map");
        return 1;
    };
    std::vector<Frame> stack;
    const uint32_t root = unit_offset(unit[0]);
    open(root);
    stack.push_back({root, 0, 0});
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.c == 256) {
            if (f.best > kMaxMatches) bad("more than 32 rules match along one input");
            most_below[f.base] = static_cast<uint8_t>(f.best);
            state[f.base] = kDone;
            const uint32_t done = f.base;
            stack.pop_back();
            if (stack.empty()) break;
            Frame& parent = stack.back();
            parent.best = std::max(parent.best, leaf_of(parent.base ^ parent.c) + most_below[done]);
            ++parent.c;
            continue;
        }
        const uint32_t child = f.base ^ f.c;
        const uint32_t u = unit[child];
        if (unit_label(u) != f.c) {
            ++f.c;
            continue;
        }
        const int leaf = leaf_of(child);
        const uint32_t next = child ^ unit_offset(u);
        if (next >= units) bad("a trie node points outside the trie");
        if (state[next] == kDone) {
            f.best = std::max(f.best, leaf + most_below[next]);
            ++f.c;
        } else if (state[next] == kOpen) {
            bad("the trie has a cycle");
        } else {
            open(next);
            stack.push_back({next, 0, 0});
        }
    }
}

void check_normalizer(std::string_view spec, const std::string& file, const char* name) {
    // The rule sets SentencePiece builds in (normalizer.cc), "user_defined" for a custom map, and
    // "" where a converter wrote none.
    static const char* const kNames[] = {"", "nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity", "user_defined"};
    WireReader r(spec, file, name);
    for (Field f; r.next(&f);) {
        if (f.number == 1 && f.wire_type == 2 && std::find(std::begin(kNames), std::end(kNames), f.bytes) == std::end(kNames))
            corrupt(file, std::string(name) + ".name: unknown normalizer '" + std::string(f.bytes) + "'");
        if (f.number == 2 && f.wire_type == 2) check_charsmap(f.bytes, file, name);
    }
}

// trainer_spec fields that decide how the model is read: its algorithm and the special ids.
struct TrainerSpec {
    int64_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;  // the proto's defaults
};

TrainerSpec check_trainer_spec(std::string_view spec, const std::string& file) {
    TrainerSpec t;
    WireReader r(spec, file, "trainer_spec");
    for (Field f; r.next(&f);) {
        if (f.wire_type != 0) continue;
        const auto value = static_cast<int64_t>(static_cast<int32_t>(f.varint));  // int32 fields, -1 sign-extended
        if (f.number == 3 && (f.varint < 1 || f.varint > 4))                      // UNIGRAM, BPE, WORD, CHAR
            corrupt(file, "trainer_spec.model_type " + std::to_string(value) + " is not one of UNIGRAM, BPE, WORD, CHAR");
        if (f.number == 40) t.unk_id = value;
        if (f.number == 41) t.bos_id = value;
        if (f.number == 42) t.eos_id = value;
        if (f.number == 43) t.pad_id = value;
    }
    return t;
}

void check_special_ids(const TrainerSpec& t, size_t pieces, const std::string& file) {
    const std::pair<const char*, int64_t> ids[] = {
        {"unk_id", t.unk_id}, {"bos_id", t.bos_id}, {"eos_id", t.eos_id}, {"pad_id", t.pad_id}};
    for (const auto& [name, id] : ids) {
        if (id < -1 || id >= static_cast<int64_t>(pieces))
            corrupt(file, std::string("trainer_spec.") + name + " " + std::to_string(id) + " is outside the " +
                              std::to_string(pieces) + " pieces");
    }
    if (t.unk_id < 0) corrupt(file, "trainer_spec.unk_id must name a piece");
}

// Returns the piece text (the last one, as protobuf merges repeated scalars) and its type.
std::pair<std::string_view, uint64_t> check_piece(std::string_view message, size_t index, const std::string& file) {
    const std::string where = "piece " + std::to_string(index);
    WireReader r(message, file, where.c_str());
    std::string_view piece;
    uint64_t type = 1;  // NORMAL
    for (Field f; r.next(&f);) {
        if (f.number == 1 && f.wire_type == 2) piece = f.bytes;
        if (f.number == 3 && f.wire_type == 0) type = f.varint;
    }
    if (piece.empty()) corrupt(file, where + " is empty");
    if (type < 1 || type > 6)  // NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE
        corrupt(file, where + " has unknown type " + std::to_string(type));
    if (piece.size() > kMaxSpiecePieceBytes) {
        corrupt(file, where + " is " + std::to_string(piece.size()) + " bytes long, more than the " +
                          std::to_string(kMaxSpiecePieceBytes) + " accepted");
    }
    if (piece.find('\0') != std::string_view::npos) corrupt(file, where + " contains a NUL byte");
    try {
        require_valid_utf8(piece, where);
    } catch (const Error& e) {
        corrupt(file, e.what());
    }
    return {piece, type};
}

// The library's PrefixMatcher keeps at most 64 matches of the user-defined pieces; a 65th nested
// prefix would be read past its buffer.
void check_user_defined_nesting(const std::set<std::string_view>& user_defined, const std::string& file) {
    constexpr int kMaxNested = 64;
    for (std::string_view piece : user_defined) {
        int nested = 0;
        for (size_t len = 1; len <= piece.size(); ++len) nested += user_defined.count(piece.substr(0, len)) ? 1 : 0;
        if (nested > kMaxNested) corrupt(file, "more than 64 user-defined pieces are prefixes of '" + std::string(piece) + "'");
    }
}

}  // namespace

void validate_precompiled_charsmap(std::string_view blob, const std::string& file) { check_charsmap(blob, file, "Precompiled"); }

void validate_spiece_model(std::string_view model, const std::string& file) {
    WireReader r(model, file, "ModelProto");
    size_t pieces = 0;
    std::set<std::string_view> user_defined;
    TrainerSpec trainer;
    for (Field f; r.next(&f);) {
        if (f.wire_type != 2) continue;
        if (f.number == 1) {
            const auto [piece, type] = check_piece(f.bytes, pieces++, file);
            if (type == 4) user_defined.insert(piece);  // USER_DEFINED
        } else if (f.number == 2) {
            trainer = check_trainer_spec(f.bytes, file);
        } else if (f.number == 3) {
            check_normalizer(f.bytes, file, "normalizer_spec");
        } else if (f.number == 5) {
            check_normalizer(f.bytes, file, "denormalizer_spec");
        }
    }
    if (pieces == 0) corrupt(file, "no pieces");
    check_special_ids(trainer, pieces, file);
    check_user_defined_nesting(user_defined, file);
}

}  // namespace t5s
