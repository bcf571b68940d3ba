# scenario.gd — the root of a scenario scene: its length in ticks; starts the recording.
extends Spatial

export var ticks := 600

func _ready() -> void:
	RecordingManager.start_recording(ticks)
