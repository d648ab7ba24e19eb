#pragma once
// CJK-capable fonts without huge atlases: the atlas holds Latin + kana/CJK punctuation plus the
// code points actually shown (note()), and is rebuilt when new ones appear (imgui #1434). The
// first atlas is built on the UI thread (build_atlas); later ones on a worker thread
// (start_async_build / take_built_atlas), so a frame never waits for glyph rasterisation: new
// glyphs show a few frames later. The glyph bookkeeping is plain logic; no GL here.
#include <future>
#include <memory>
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

    void note(std::string_view text);  // remember every code point of a text shown
    bool needs_rebuild() const { return dirty_; }
    void set_size(float pixels);  // base size * DPI scale
    float size() const { return size_; }
    bool has_cjk_font() const { return !font_data_.empty(); }
    const std::string& font_path() const { return font_path_; }
    size_t glyph_count() const { return baked_.size(); }
    bool is_baked(unsigned code_point) const;

    // Clears and rebuilds `atlas` (between frames); the caller re-uploads the texture.
    void build_atlas(ImFontAtlas* atlas);

    // Builds a new atlas with every code point noted so far on a worker thread (texture pixels
    // included). False when one is already building or nothing changed.
    bool start_async_build();
    bool async_building() const { return building_.valid(); }
    // The finished atlas (null while building / none started). The caller installs it as
    // io.Fonts between frames, uploads its texture and deletes the old one (IM_DELETE).
    ImFontAtlas* take_built_atlas();
    ~FontManager();

private:
    struct Built {
        ImFontAtlas* atlas = nullptr;  // IM_NEW'd
        std::vector<ImWchar> ranges;   // referenced by the atlas's font config
        std::set<unsigned> glyphs;     // what it holds besides the base ranges
    };
    // Fills `atlas` with the font at `size` holding the base ranges + `glyphs` (ranges kept in
    // `ranges`). If the rasteriser refuses that set, `glyphs` is cleared and the base set built.
    bool fill_atlas(ImFontAtlas* atlas, std::set<unsigned>& glyphs, float size, std::vector<ImWchar>& ranges) const;

    std::string font_path_;
    std::vector<unsigned char> font_data_;
    std::set<unsigned> baked_, pending_, in_flight_;
    std::vector<ImWchar> ranges_;  // ImWchar ranges, kept alive for the atlas
    float size_ = 17.0f;
    bool dirty_ = true;
    std::future<Built> building_;
};

}  // namespace t5s::ui
