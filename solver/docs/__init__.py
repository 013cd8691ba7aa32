"""The documentation site: game pages from the checked spec and stored results, the
language and CLI references, the English of the rules, the lexer and the Sphinx extension."""
