"""The one reader of an answer's text, on its own floor below the renderers.

``parser`` is the markdown-it parser every output shares, with citekit's marker rule;
``reader`` reads a text once (markers, code, links, definition lines) and its shortcuts
(a scan where nothing needs parsing, ``numbers`` for the frames); ``source_map`` turns
positions in normalised text back into positions in the text as written; ``sentences`` is the
one sentence splitter. ``markdown_html`` writes a text's HTML from the same parse, with
``fast_html`` for plain answers (no markdown-it) and ``incremental`` for the live display's
growing text; ``escape`` is the escaping, URL allow-list and inline styles every HTML output
shares. Each shortcut is checked against markdown-it by the agreement tests in
``tests/text/``.

Nothing here imports the rest of citekit but ``citekit.core``.
"""
