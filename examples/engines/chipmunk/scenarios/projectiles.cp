# projectiles.cp — fast shots (80-90 m/s) into a pyramid, spawned mid-run, some removed
name chipmunk-projectiles
hz 60
ticks 600
seed 0
gravity 0 -9.81
ground
pyramid 1 6 0 0 1
at 60 projectile 200 -30 1.5 0.15 80 0
at 120 projectile 201 -30 2.5 0.15 80 2
at 180 projectile 202 -30 0.6 0.15 90 0
at 240 circle 300 0 12 0.5 5
remove 200 200
remove 201 260
remove 300 500
