#include "font_manager.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <imgui.h>

#include "t5s/text_offsets.h"

namespace t5s::ui {

namespace {
// Always baked: ASCII/Latin-1, general punctuation, kana, CJK symbols, full-width forms.
const unsigned kBaseRanges[][2] = {
    {0x0020, 0x00FF}, {0x2000, 0x206F}, {0x2190, 0x21FF}, {0x25A0, 0x25FF}, {0x3000, 0x30FF}, {0xFF00, 0xFFEF},
};
}  // namespace

FontManager::FontManager(std::string font_path) : font_path_(std::move(font_path)) {
    if (!font_path_.empty()) {
        std::ifstream in(font_path_, std::ios::binary);
        if (in) font_data_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
}

std::string FontManager::find_cjk_font() {
    for (const char* p :
         {"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
          "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"}) {
        std::error_code ec;
        if (std::filesystem::exists(p, ec)) return p;
    }
    return {};
}

bool FontManager::is_baked(unsigned cp) const {
    for (const auto& r : kBaseRanges)
        if (cp >= r[0] && cp <= r[1]) return true;
    return baked_.count(cp) > 0;
}

void FontManager::note(std::string_view text) {
    // Fast path: pure ASCII needs nothing.
    bool ascii = true;
    for (char c : text)
        if (static_cast<unsigned char>(c) >= 0x80) {
            ascii = false;
            break;
        }
    if (ascii) return;
    for (const char32_t cp : decode_code_points(text)) {
        // Control characters have no glyph, and a 0 would end ImGui's glyph ranges: the whole font
        // would come out empty. (Malformed bytes a random model emits, an overlong NUL or a
        // surrogate, decode to U+FFFD, which ImGui draws for them too.)
        if (cp < 0x20) continue;
        if ((sizeof(ImWchar) == 2 && cp > 0xFFFF) || is_baked(cp) || pending_.count(cp) || in_flight_.count(cp))
            continue;  // ImWchar is 16-bit in Debian's build
        pending_.insert(cp);
        dirty_ = true;
    }
}

void FontManager::set_size(float pixels) {
    if (pixels != size_) {
        size_ = pixels;
        dirty_ = true;
    }
}

bool FontManager::fill_atlas(ImFontAtlas* atlas, std::set<unsigned>& glyphs, float size, std::vector<ImWchar>& ranges_out) const {
    atlas->Clear();
    if (font_data_.empty()) {
        ImFontConfig cfg;
        cfg.SizePixels = size;
        atlas->AddFontDefault(&cfg);
    } else {
        ImFontGlyphRangesBuilder builder;
        for (const auto& r : kBaseRanges)
            for (unsigned c = r[0]; c <= r[1]; ++c) builder.AddChar(ImWchar(c));
        for (unsigned c : glyphs) builder.AddChar(ImWchar(c));
        ImVector<ImWchar> ranges;
        builder.BuildRanges(&ranges);
        ranges_out.assign(ranges.begin(), ranges.end());
        ImFontConfig cfg;
        cfg.FontDataOwnedByAtlas = false;  // font_data_ outlives every atlas (read-only: safe to share)
        cfg.FontNo = 0;                    // Noto Sans CJK JP (covers kana, kanji and hanzi shapes)
        cfg.OversampleH = 1;
        cfg.OversampleV = 1;
        cfg.PixelSnapH = true;
        atlas->AddFontFromMemoryTTF(const_cast<unsigned char*>(font_data_.data()), int(font_data_.size()), size, &cfg,
                                    ranges_out.data());
    }
    if (atlas->Build() && !atlas->Fonts.empty() && atlas->Fonts[0]->IsLoaded()) return true;
    if (glyphs.empty()) return false;
    // A glyph set the rasteriser refuses: fall back to the base ranges rather than no font.
    std::fprintf(stderr, "t5studio: font atlas build failed with %zu extra glyphs; using the base set\n", glyphs.size());
    glyphs.clear();
    return fill_atlas(atlas, glyphs, size, ranges_out);
}

void FontManager::build_atlas(ImFontAtlas* atlas) {
    baked_.insert(pending_.begin(), pending_.end());
    pending_.clear();
    fill_atlas(atlas, baked_, size_, ranges_);  // may drop baked_ to the base set
    dirty_ = false;
}

bool FontManager::start_async_build() {
    if (building_.valid() || !dirty_) return false;
    std::set<unsigned> glyphs = baked_;
    glyphs.insert(pending_.begin(), pending_.end());
    in_flight_ = std::move(pending_);
    pending_.clear();
    dirty_ = false;
    const float size = size_;
    // The worker touches only its own atlas and the read-only font bytes (no ImGui context state).
    building_ = std::async(std::launch::async, [this, glyphs = std::move(glyphs), size]() mutable {
        Built b;
        b.atlas = IM_NEW(ImFontAtlas)();
        fill_atlas(b.atlas, glyphs, size, b.ranges);  // may drop glyphs to the base set
        unsigned char* pixels = nullptr;
        int w = 0, h = 0;
        b.atlas->GetTexDataAsRGBA32(&pixels, &w, &h);  // the conversion the GL upload needs, done here too
        b.glyphs = std::move(glyphs);
        return b;
    });
    return true;
}

ImFontAtlas* FontManager::take_built_atlas() {
    if (!building_.valid() || building_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
    Built b = building_.get();
    baked_ = std::move(b.glyphs);
    // A set the rasteriser refused was dropped (base set only), as in build_atlas: not retried here.
    in_flight_.clear();
    ranges_ = std::move(b.ranges);  // the vector's buffer moves with it: the atlas's pointer stays valid
    return b.atlas;
}

FontManager::~FontManager() {
    if (building_.valid()) {
        Built b = building_.get();
        IM_DELETE(b.atlas);
    }
}

}  // namespace t5s::ui
