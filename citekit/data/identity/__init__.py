"""Which sources are one work and which authors one person.

``keys`` turns addresses, titles and names into comparison keys (no polars); ``aliases`` reads
the alias table, shipped as ``aliases.json`` beside it, and a user's additions; ``clusters``
(``identify``) gives every row of a sources frame its work and author, ``naming`` their ids
and display names.
"""
