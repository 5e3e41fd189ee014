"""Terminal task bundles (Harbor layout): models, import, static checks, families, verification."""
