# spawn.gd — one body (box, sphere or projectile) with id BODY_ID added at tick AT_TICK (0: when the
# scene starts), at this node's place, with VELOCITY.
extends Spatial

const Bodies = preload("res://scenario/bodies.gd")

export var body_id := 1
export(int, "box", "sphere", "", "projectile") var kind := 1
export var size := 0.5
export var mass := 1.0
export var velocity := Vector3()
export var at_tick := 0

func _ready() -> void:
	if at_tick == 0:
		add_child(Bodies.make(body_id, kind, Vector3(), size, mass, velocity))

func _physics_process(_delta: float) -> void:
	if at_tick > 0 and RecordingManager.current_frame == at_tick:
		add_child(Bodies.make(body_id, kind, Vector3(), size, mass, velocity))
