# rewindable.gd — the seed's RewindableComponent for Godot 3: a child of any body to record.
# get_snapshot() gives the parent's state as the physics engine holds it (float32: real_t in
# Debian's build); stable_id is the id the scene gave the body (never get_instance_id()).
extends Node
# (no class_name: a class_name needs the editor's class cache; scripts preload this file)


# the scenario's id for the body: 1.., stable across runs, never reused
export var stable_id := 0
# the scenario's shape: 0 box, 1 sphere, 2 static, 3 projectile (not recorded: a shape is not a body
# kind; the stream's kind is the body's mode)
export var kind := 0

func _ready() -> void:
	get_parent().add_to_group("rewindable")

func get_snapshot() -> Dictionary:
	var body: RigidBody = get_parent()
	var t: Transform = body.global_transform
	var flags := 0
	if not body.sleeping:
		flags |= 1
	if body.mode == RigidBody.MODE_KINEMATIC:
		flags |= 2
	return {
		"transform": t,
		"position": t.origin,
		"rotation": t.basis.get_rotation_quat(),
		"velocity": body.linear_velocity,
		"angular_velocity": body.angular_velocity,
		"mode": body.mode,
		"flags": flags,
	}

# Playback: puts the body where the snapshot says. The seed's apply_snapshot sets the position
# and rotation only (full = false: what --apply seed replays): the physics engine then gives the
# body its own velocity, a teleported body wakes up, and a quaternion put back through a Basis comes
# out an ulp off. full: the whole transform as captured, both velocities and the sleep state.
func apply_snapshot(snapshot: Dictionary, full := true) -> void:
	var body: RigidBody = get_parent()
	if not full:
		body.global_transform = Transform(Basis(snapshot["rotation"]), snapshot["position"])
		return
	body.global_transform = snapshot["transform"]
	body.linear_velocity = snapshot["velocity"]
	body.angular_velocity = snapshot["angular_velocity"]
	body.sleeping = (snapshot["flags"] & 1) == 0
