#!/usr/bin/env bash
# run.sh SCENE [recorder options] — runs one scenario scene headless in Godot 3 (Debian's
# godot3-server) and leaves only detgate's state stream on stdout.
# Godot prints its banner and a blank line to stdout before any script runs, and --quiet would
# silence the recorder's print too, so the stream is cut from its schema line on; pipefail keeps
# Godot's exit status. --fixed-fps 60: one physics tick per frame, run as fast as the CPU goes.
set -o pipefail
scene=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
case $scene in
  /*) scene=res://${scene#"$here"/} ;;   # detgate passes the scene's absolute path
esac
# Godot wants a writable HOME for its user data; a private one keeps runs apart
export HOME=${GODOT_HOME:-${TMPDIR:-/tmp}/detgate-godot-home}
mkdir -p "$HOME"
"${GODOT:-godot3-server}" --path "$here" ${GODOT_FLAGS---fixed-fps 60} "$scene" "$@" |
  sed -n '/^#! schema /,$p'
