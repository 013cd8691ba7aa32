"""The language server for `.rules` files (`rulebook lsp`): diagnostics, hover, navigation,
completion and rename for editors, over the Language Server Protocol (pygls)."""
