"""CompoWorld composition: random walks, task authoring, verification gates and their records."""
