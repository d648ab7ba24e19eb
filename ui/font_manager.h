#pragma once
// CJK-capable fonts without huge atlases: the atlas holds Latin + kana/CJK punctuation plus the
// code points actually shown (note()), and is rebuilt between frames when new ones appear
// (imgui #1434). The glyph bookkeeping is plain logic; build_atlas() needs an ImGui context but no GL.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

namespace t5s::ui {

class FontManager {
public:
    // `font_path`: a .ttc/.otf/.ttf with CJK glyphs (read once); "" or unreadable -> ImGui's default font.
    explicit FontManager(std::string font_path = {});
    static std::string find_cjk_font();  // Debian's Noto Sans CJK / WenQuanYi, or ""

    void note(std::string_view text);              // remember every code point of a text shown
    bool needs_rebuild() const { return dirty_; }
    void set_size(float pixels);                   // base size * DPI scale
    float size() const { return size_; }
    bool has_cjk_font() const { return !font_data_.empty(); }
    const std::string& font_path() const { return font_path_; }
    size_t glyph_count() const { return baked_.size(); }
    bool is_baked(unsigned code_point) const;

    // Clears and rebuilds `atlas` (between frames); the caller re-uploads the texture.
    void build_atlas(ImFontAtlas* atlas);

private:
    std::string font_path_;
    std::vector<unsigned char> font_data_;
    std::set<unsigned> baked_, pending_;
    std::vector<ImWchar> ranges_;  // ImWchar ranges, kept alive for the atlas
    float size_ = 17.0f;
    bool dirty_ = true;
};

}  // namespace t5s::ui
