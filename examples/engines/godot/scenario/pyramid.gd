# pyramid.gd — a pyramid of LAYERS rows of cubes (SIZE m), ids FIRST_ID.. bottom row first, left to
# right; built when the scene starts, or at tick AT_TICK (a spawn mid-run).
extends Spatial

const Bodies = preload("res://scenario/bodies.gd")

export var first_id := 1
export var layers := 6
export var size := 1.0
export var mass := 1.0
export var at_tick := 0

func _ready() -> void:
	if at_tick == 0:
		_build()

func _physics_process(_delta: float) -> void:
	if at_tick > 0 and RecordingManager.current_frame == at_tick:
		_build()

func _build() -> void:
	var id := first_id
	for row in layers:
		var n: int = layers - row
		for i in n:
			var x: float = (i - (n - 1) * 0.5) * size * 1.02
			var y: float = size * 0.5 + row * size
			add_child(Bodies.make(id, Bodies.Kind.BOX, Vector3(x, y, 0), size, mass, Vector3()))
			id += 1
