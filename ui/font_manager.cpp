#include "font_manager.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <imgui.h>

#include "text_diff.h"

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
    for (const char* p : {"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
                          "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
                          "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
                          "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"}) {
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
        if (static_cast<unsigned char>(c) >= 0x80) { ascii = false; break; }
    if (ascii) return;
    std::vector<unsigned> cps;
    collect_code_points(text, cps);
    for (unsigned cp : cps) {
        if ((sizeof(ImWchar) == 2 && cp > 0xFFFF) || is_baked(cp) || pending_.count(cp)) continue;  // ImWchar is 16-bit in Debian's build
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

void FontManager::build_atlas(ImFontAtlas* atlas) {
    baked_.insert(pending_.begin(), pending_.end());
    pending_.clear();
    atlas->Clear();
    if (font_data_.empty()) {
        ImFontConfig cfg;
        cfg.SizePixels = size_;
        atlas->AddFontDefault(&cfg);
    } else {
        ImFontGlyphRangesBuilder builder;
        for (const auto& r : kBaseRanges)
            for (unsigned c = r[0]; c <= r[1]; ++c) builder.AddChar(ImWchar(c));
        for (unsigned c : baked_) builder.AddChar(ImWchar(c));
        ImVector<ImWchar> ranges;
        builder.BuildRanges(&ranges);
        ranges_.assign(ranges.begin(), ranges.end());
        ImFontConfig cfg;
        cfg.FontDataOwnedByAtlas = false;
        cfg.FontNo = 0;  // Noto Sans CJK JP (covers kana, kanji and hanzi shapes)
        cfg.OversampleH = 1;
        cfg.OversampleV = 1;
        cfg.PixelSnapH = true;
        atlas->AddFontFromMemoryTTF(font_data_.data(), int(font_data_.size()), size_, &cfg,
                                    ranges_.data());
    }
    const bool ok = atlas->Build() && !atlas->Fonts.empty() && atlas->Fonts[0]->IsLoaded();
    if (!ok && !baked_.empty()) {
        // A glyph set the rasteriser refuses: fall back to the base ranges rather than no font.
        std::fprintf(stderr, "t5studio: font atlas build failed with %zu extra glyphs; using the base set\n", baked_.size());
        baked_.clear();
        build_atlas(atlas);
        return;
    }
    dirty_ = false;
}

}  // namespace t5s::ui
