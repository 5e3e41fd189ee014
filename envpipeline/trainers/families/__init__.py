"""Episode plug-ins, one module per task family (registered in `envpipeline.trainers.episode.EPISODES`)."""
