# long.cp — 200 circles rained onto a pyramid and a chain, 50 more spawned at tick 1200, a fast shot
# (about 290 bodies at the end), 2400 ticks (40 s at 60 Hz)
name chipmunk-long
hz 60
ticks 2400
seed 7
gravity 0 -9.81
ground
pyramid 1 8 0 0 1
chain 100 10 -8 8 0.6
scatter 1000 200 -6 4 6 20 0.35
at 600 projectile 2000 -40 1 0.2 120 0
at 1200 scatter 3000 50 -4 10 4 14 0.3
remove 2000 1000
