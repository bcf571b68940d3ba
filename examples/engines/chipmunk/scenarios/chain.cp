# chain.cp — a 16-link chain on pivot joints, pinned at one end, swinging down onto a small pyramid
name chipmunk-chain
hz 60
ticks 600
seed 0
gravity 0 -9.81
ground
chain 1 16 0 8 0.5
pyramid 100 4 6 0 0.8
