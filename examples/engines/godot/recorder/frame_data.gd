# frame_data.gd — the seed's ReplayFrameData: one tick of the recording.
extends Reference

var frame_index: int
var timestamp: float
var entity_states: Dictionary = {}  # entity id -> snapshot dict (RewindableComponent.get_snapshot)
