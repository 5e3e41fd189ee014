"""CompoWorld composition: random walks, task authoring, rubric checks and gates."""
