"""The pure session model: parsing, migration, the tree, layout rows and context. No I/O, no UI."""
