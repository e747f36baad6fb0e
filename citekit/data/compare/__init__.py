"""One question to several clients, kept side by side.

``clients`` asks them (``compare``, ``acompare``); ``comparison`` holds what they returned as
one corpus (``Comparison``); ``html`` draws it in columns.
"""
