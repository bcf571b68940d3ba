# bodies.gd — builds the scenario's rigid bodies: a RigidBody, its CollisionShape and its
# RewindableComponent (the body's stable id and stream type).
extends Reference

const Rewindable = preload("res://recorder/rewindable.gd")

enum Kind { BOX = 0, SPHERE = 1, PROJECTILE = 3 }

static func make(id: int, kind: int, at: Vector3, size: float, mass: float, velocity: Vector3) -> RigidBody:
	var body := RigidBody.new()
	body.name = "body%d" % id
	body.mass = mass
	body.translation = at
	body.linear_velocity = velocity
	var shape := CollisionShape.new()
	if kind == Kind.BOX:
		var box := BoxShape.new()
		box.extents = Vector3(size, size, size) * 0.5
		shape.shape = box
	else:
		var ball := SphereShape.new()
		ball.radius = size
		shape.shape = ball
	if kind == Kind.PROJECTILE:
		body.continuous_cd = true
	body.add_child(shape)
	var rew := Rewindable.new()
	rew.name = "Rewindable"
	rew.stable_id = id
	rew.kind = kind
	body.add_child(rew)
	return body
