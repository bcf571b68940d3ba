# remove.gd — removes the body with stable id BODY_ID at tick AT_TICK (before the tick is recorded).
extends Node

export var body_id := 1
export var at_tick := 1

func _physics_process(_delta: float) -> void:
	if RecordingManager.current_frame != at_tick:
		return
	for node in get_tree().get_nodes_in_group("rewindable"):
		if node.get_node("Rewindable").stable_id == body_id:
			node.get_parent().remove_child(node)
			node.queue_free()
			return
	RecordingManager.fail("remove: no body with id %d at tick %d" % [body_id, at_tick])
