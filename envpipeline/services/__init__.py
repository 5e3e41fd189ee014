"""CompoWorld services: typed state, namespaced tools, one registry."""
