# pyramid.cp — a 10-layer box pyramid (55 boxes) on a ground segment, 10 s at 60 Hz
name chipmunk-pyramid
hz 60
ticks 600
seed 0
gravity 0 -9.81
ground
pyramid 1 10 0 0 1
