"""Red-team policies: the adversaries every accepted task must defeat, and the gate that runs them."""
