# replay_serializer.gd — the seed's ReplaySerializer for Godot 3: a recording saved to a file and
# loaded back. store_var keeps Vector3 / Quat as their float32 components, so nothing is rounded.
extends Reference

const FrameData = preload("res://recorder/frame_data.gd")

static func save_replay(frames: Array, path: String) -> int:
	var file := File.new()
	var err := file.open(path, File.WRITE)
	if err != OK:
		return err
	file.store_buffer("REPLAY".to_ascii())
	file.store_32(1)  # version
	file.store_32(frames.size())
	file.store_32(Engine.iterations_per_second)
	for frame in frames:
		file.store_32(frame.frame_index)
		file.store_float(frame.timestamp)
		file.store_32(frame.entity_states.size())
		for entity_id in frame.entity_states:
			file.store_64(entity_id)
			file.store_var(frame.entity_states[entity_id], true)
	file.close()
	return OK

static func load_replay(path: String) -> Array:
	var frames := []
	var file := File.new()
	if file.open(path, File.READ) != OK:
		return frames
	if file.get_buffer(6).get_string_from_ascii() != "REPLAY":
		push_error("Invalid replay file")
		return frames
	var _version := file.get_32()
	var frame_count := file.get_32()
	var _tick_rate := file.get_32()
	for _i in frame_count:
		var frame := FrameData.new()
		frame.frame_index = file.get_32()
		frame.timestamp = file.get_float()
		var entity_count := file.get_32()
		for _j in entity_count:
			var entity_id := file.get_64()
			frame.entity_states[entity_id] = file.get_var(true)
		frames.append(frame)
	return frames
