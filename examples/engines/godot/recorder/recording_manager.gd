# recording_manager.gd — the seed's RecordingManager (AutoLoad) for Godot 3: every physics tick it
# captures a FrameData of the "rewindable" group and writes the tick to stdout as detgate's CSV state
# stream (docs/STATES-STREAM.md). Floats are written as C hex floats (0x...p-40), exact: the value
# detgate's strtod reads is the engine's float32 bit for bit. Options (after the scene on the
# command line): --ids stable|instance, --runs N, --save FILE, --replay FILE, and two pitfalls:
# --record-in process (a tick per rendered frame, not per physics tick), --logic-in process (the
# scenario's thrusters pushed from _process with its variable delta); --apply seed replays with
# the seed's apply_snapshot (position and rotation only).
extends Node

const FrameData = preload("res://recorder/frame_data.gd")
const ReplaySerializer = preload("res://recorder/replay_serializer.gd")
const Rewindable = preload("res://recorder/rewindable.gd")

enum State { IDLE, RECORDING, PLAYING_BACK }
const TWO40 := 1099511627776.0        # 2^40: every float32 in [2^-17, 2^13) times it is an integer
const TWO24 := 16777216.0
const TWO53 := 9007199254740992.0

# Maximum frames kept in memory (the seed's circular buffer): 5 minutes at 60 Hz.
export var max_frames := 18000

var state: int = State.IDLE
var current_frame := 0          # the tick being captured: the scenario spawns and removes by it
var ticks := 0                  # the scenario's length (set by the scene root)
var runs_left := 1
var use_instance_ids := false   # the seed's pitfall: get_instance_id() as the entity id
var save_path := ""
var replay_frames := []
var _frames := []
var failed := false
var record_in_process := false  # the pitfall: capture in _process (frames are not physics ticks)
var logic_in_process := false   # the pitfall: game logic in _process with its variable delta
var self_check := false         # --self-check: every written float parsed back and compared
var apply_full := true          # playback restores velocity and sleep too (--apply seed: not)

func _ready() -> void:
	process_priority = 1000     # after every scenario node: a tick's spawns and removals come first
	_parse_args(OS.get_cmdline_args())

func _parse_args(args: Array) -> void:
	var i := 0
	while i < args.size():
		var a: String = args[i]
		var v: String = args[i + 1] if i + 1 < args.size() else ""
		match a:
			"--ids":
				if v != "stable" and v != "instance":
					fail("--ids: expected stable or instance, found '%s'" % v)
				use_instance_ids = v == "instance"
				i += 1
			"--runs":
				if not v.is_valid_integer() or int(v) < 1:
					fail("--runs: expected an integer >= 1, found '%s'" % v)
				runs_left = int(v)
				i += 1
			"--record-in", "--logic-in":
				if v != "physics" and v != "process":
					fail("%s: expected physics or process, found '%s'" % [a, v])
				if a == "--record-in":
					record_in_process = v == "process"
				else:
					logic_in_process = v == "process"
				i += 1
			"--apply":
				if v != "full" and v != "seed":
					fail("--apply: expected full or seed, found '%s'" % v)
				apply_full = v == "full"
				i += 1
			"--self-check":
				self_check = true
			"--save":
				save_path = v
				i += 1
			"--replay":
				replay_frames = ReplaySerializer.load_replay(v)
				if replay_frames.empty():
					fail("--replay %s: no frame could be read" % v)
				i += 1
		i += 1

# Called by the scene root when its scenario starts (each run).
func start_recording(scenario_ticks: int) -> void:
	if Engine.iterations_per_second != 60:
		fail("the CSV state stream implies 60 Hz; physics/common/physics_fps is %d" % Engine.iterations_per_second)
		return
	ticks = scenario_ticks
	_frames.clear()
	current_frame = 0
	state = State.PLAYING_BACK if not replay_frames.empty() else State.RECORDING
	if runs_left == 1:
		print(SCHEMA)

func fail(what: String) -> void:
	printerr("recording_manager: " + what)
	failed = true
	OS.exit_code = 3
	get_tree().quit()

func _physics_process(_delta: float) -> void:
	if not record_in_process:
		_tick()

func _process(_delta: float) -> void:
	if record_in_process:
		_tick()

func _tick() -> void:
	if failed or state == State.IDLE:
		return
	if state == State.PLAYING_BACK:
		_apply_frame(current_frame)
	var frame := _capture_frame()
	if runs_left == 1:
		_emit(frame)
	current_frame += 1
	if current_frame >= ticks:
		_end_run()

func _capture_frame() -> FrameData:
	var frame := FrameData.new()
	frame.frame_index = current_frame
	frame.timestamp = OS.get_ticks_msec() / 1000.0
	for node in get_tree().get_nodes_in_group("rewindable"):
		var comp = _get_rewindable_component(node)
		if comp:
			var id: int = node.get_instance_id() if use_instance_ids else comp.stable_id
			var snap: Dictionary = comp.get_snapshot()
			snap["kind"] = comp.kind
			frame.entity_states[id] = snap
	_frames.append(frame)
	if _frames.size() > max_frames:
		_frames.pop_front()
	return frame

# The seed looks through the node's children for the component; the scenario's bodies name it
# "Rewindable", so one lookup by name finds it (a quarter of the capture's time, measured).
func _get_rewindable_component(node: Node):
	var comp = node.get_node_or_null("Rewindable")
	return comp if comp is Rewindable else null

# Playback: every body of the recorded frame put where the recording says (by its stable id).
func _apply_frame(index: int) -> void:
	if index >= replay_frames.size():
		fail("--replay: the recording has %d frames, the scenario %d" % [replay_frames.size(), ticks])
		return
	var frame: FrameData = replay_frames[index]
	for node in get_tree().get_nodes_in_group("rewindable"):
		var comp = _get_rewindable_component(node)
		if comp and frame.entity_states.has(comp.stable_id):
			comp.apply_snapshot(frame.entity_states[comp.stable_id], apply_full)

func _end_run() -> void:
	state = State.IDLE
	runs_left -= 1
	if save_path != "" and runs_left == 0:
		var err: int = ReplaySerializer.save_replay(_frames, save_path)
		if err != OK:
			fail("--save %s: error %d" % [save_path, err])
			return
	if runs_left > 0:
		get_tree().reload_current_scene()   # the next run: the level restarted in this process
	else:
		get_tree().quit()

# One print per tick (Godot flushes stdout on every print). A row's floats are formatted by one
# sprintf when all are multiples of 2^-40 below 2^13 (the usual case), else one by one (_hx).
const ROW := "%d,%d,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,0x%xp-40,%s,%s"
# The declared schema (docs/STATES-STREAM.md, "Declared fields"; the same as detgate.ini's): Godot's
# own state, no type, health, faction or flags. kind: RigidBody.mode, in Godot 3's Mode order.
const SCHEMA := """#! schema standard=pos,vel,rot position_quantum=0.0009765625 velocity_quantum=0.0009765625
#! field angvel.x type=float unit=rad/s quantum=0.000244140625
#! field angvel.y type=float unit=rad/s quantum=0.000244140625
#! field angvel.z type=float unit=rad/s quantum=0.000244140625
#! field awake type=bool
#! field kind type=enum values=rigid,static,character,kinematic
tick,id,px,py,pz,vx,vy,vz,qw,qx,qy,qz,angvel.x,angvel.y,angvel.z,awake,kind"""
const MODE_NAME := ["rigid", "static", "character", "kinematic"]

func _emit(frame: FrameData) -> void:
	var rows := PoolStringArray()
	for id in frame.entity_states:
		var s: Dictionary = frame.entity_states[id]
		var p: Vector3 = s["position"]
		var v: Vector3 = s["velocity"]
		var q: Quat = s["rotation"]
		var w: Vector3 = s["angular_velocity"]
		var awake := "true" if (s["flags"] & 1) != 0 else "false"
		var kind: String = MODE_NAME[s["mode"]]
		var f := [p.x * TWO40, p.y * TWO40, p.z * TWO40, v.x * TWO40, v.y * TWO40, v.z * TWO40,
			q.w * TWO40, q.x * TWO40, q.y * TWO40, q.z * TWO40, w.x * TWO40, w.y * TWO40, w.z * TWO40]
		var exact := true
		for x in f:
			if x != floor(x) or x == 0.0 or abs(x) >= TWO53:
				exact = false
				break
		if exact:
			rows.append(ROW % [frame.frame_index, id, int(f[0]), int(f[1]), int(f[2]), int(f[3]), int(f[4]),
				int(f[5]), int(f[6]), int(f[7]), int(f[8]), int(f[9]), int(f[10]), int(f[11]), int(f[12]),
				awake, kind])
		else:
			rows.append("%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s" % [frame.frame_index, id,
				_hx(p.x), _hx(p.y), _hx(p.z), _hx(v.x), _hx(v.y), _hx(v.z),
				_hx(q.w), _hx(q.x), _hx(q.y), _hx(q.z), _hx(w.x), _hx(w.y), _hx(w.z), awake, kind])
	if failed:
		return
	var text := rows.join("\n").replace("0x-", "-0x")
	if self_check:
		_check_tick(frame, text)
	print(text)

# --self-check: each float of the tick's rows, parsed back from its hex text, is the captured value.
func _check_tick(frame: FrameData, text: String) -> void:
	var lines := text.split("\n")
	var n := 0
	for id in frame.entity_states:
		var s: Dictionary = frame.entity_states[id]
		var p: Vector3 = s["position"]
		var v: Vector3 = s["velocity"]
		var q: Quat = s["rotation"]
		var w: Vector3 = s["angular_velocity"]
		var want := [p.x, p.y, p.z, v.x, v.y, v.z, q.w, q.x, q.y, q.z, w.x, w.y, w.z]
		var cells := lines[n].split(",")
		for c in 13:
			var got := _parse_hex(cells[2 + c])
			if got != want[c] or atan2(got, -1.0) != atan2(want[c], -1.0):
				fail("self-check: tick %d, entity %d, column %d: wrote %s for %s" % [frame.frame_index,
					id, 2 + c, cells[2 + c], want[c]])
				return
		n += 1

func _parse_hex(t: String) -> float:
	var neg := t.begins_with("-")
	if neg:
		t = t.substr(1, t.length() - 1)
	var x := 0.0
	if t != "0":
		var p := t.find("p-")
		var digits := t.substr(2, p - 2)   # up to 14 hex digits; hex_to_int is 32-bit: 6 at a time
		var cut := max(0, digits.length() - 6)
		var hi := ("0x" + digits.substr(0, cut)).hex_to_int() if cut > 0 else 0
		var lo := ("0x" + digits.substr(cut, 6)).hex_to_int()
		x = (float(hi) * TWO24 + float(lo)) / pow(2.0, int(t.substr(p + 2, 8)))
	return -x if neg else x

# x as a C hex float, exactly: x * 2^k is an integer below 2^53 (x is a float32 widened to a
# double, so k = 40 + 24j reaches one for every x); zero keeps its sign.
func _hx(x: float) -> String:
	var s := x * TWO40
	if s == 0.0:
		return "-0" if atan2(x, -1.0) < 0.0 else "0"
	var k := 40
	while s != floor(s) and abs(s) < TWO53:
		s *= TWO24
		k += 24
	if abs(s) >= TWO53:
		fail("value %s is not a float32 below 8192 in magnitude (tick %d)" % [x, current_frame])
		return "0"
	return "0x%xp-%d" % [int(s), k]
