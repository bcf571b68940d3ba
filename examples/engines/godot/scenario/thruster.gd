# thruster.gd — pushes the body with stable id BODY_ID with FORCE (newtons) from tick FROM to tick
# UNTIL, as a game's engine or wind does: an impulse of FORCE * delta per physics tick, or per frame
# from _process with its variable delta when the recorder says --logic-in process (the pitfall).
extends Node

export var body_id := 1
export var force := Vector3(0, 0, 0)
export var from_tick := 0
export var until_tick := 60

func _physics_process(delta: float) -> void:
	if not RecordingManager.logic_in_process:
		_push(delta)

func _process(delta: float) -> void:
	if RecordingManager.logic_in_process:
		_push(delta)

func _push(delta: float) -> void:
	var t := RecordingManager.current_frame
	if t < from_tick or t >= until_tick:
		return
	for node in get_tree().get_nodes_in_group("rewindable"):
		if node.get_node("Rewindable").stable_id == body_id:
			node.apply_central_impulse(force * delta)
			return
