#!/usr/bin/env python3
"""The documentation holds together: README.md stays a short door (at most 250 lines), every page the
README or docs/README.md links exists, every docs page is in the index, and every relative link in
README.md and docs/*.md reaches a file (and, with #fragment, a heading of that page).

  check_docs.py REPO_ROOT      (ctest docs_links)
"""
import glob
import os
import re
import sys
from urllib.parse import unquote

README_MAX_LINES = 250
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(text):
    """The text outside fenced code blocks and inline code, where a [x](y) is a real link."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path):
    """GitHub's heading anchors for a Markdown file: lower case, punctuation dropped, spaces to
    hyphens, a repeated heading suffixed -1, -2, ..."""
    seen, out = {}, set()
    with open(path, encoding="utf-8") as f:
        for line in prose(f.read().replace("`", "")).splitlines():
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def links(path):
    with open(path, encoding="utf-8") as f:
        return [m.group(1) for m in LINK.finditer(prose(f.read()))]


def main(root):
    root, errors = os.path.abspath(root), []
    readme, index = os.path.join(root, "README.md"), os.path.join(root, "docs", "README.md")
    with open(readme, encoding="utf-8") as f:
        n = len(f.read().splitlines())
    if n > README_MAX_LINES:
        errors.append("README.md has %d lines, more than %d: move the detail into a docs/ page and link it"
                      % (n, README_MAX_LINES))

    pages = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    indexed = set()
    for doc in [readme] + pages:
        rel_doc = os.path.relpath(doc, root)
        for target in links(doc):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not ours to check
                continue
            file_part, _, fragment = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(doc), unquote(file_part))) if file_part else doc
            if not os.path.exists(dest):
                errors.append("%s links %s, which does not exist" % (rel_doc, target))
                continue
            if doc in (readme, index) and dest.endswith(".md"):
                indexed.add(dest)
            if fragment and dest.endswith(".md") and fragment not in anchors(dest):
                errors.append("%s links %s: %s has no heading with the anchor #%s"
                              % (rel_doc, target, os.path.relpath(dest, root), fragment))
    for page in pages:
        if page != index and page not in indexed:
            errors.append("docs/%s is linked from neither README.md nor docs/README.md" % os.path.basename(page))

    for e in errors:
        print(e)
    print("%d problem(s) in README.md and %d docs pages" % (len(errors), len(pages)))
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
