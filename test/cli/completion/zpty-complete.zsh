# Asks a real interactive zsh (in a zsh/zpty pseudo-terminal) to complete one line with the
# script `ugs completion zsh` printed, and writes every match zsh's completion system added.
# usage: zsh -f zpty-complete.zsh <completion script> <ugs command> <line> <output file>
zmodload zsh/zpty || exit 3
script=$1 ugs=$2 line=$3 out=$4
zpty z zsh -f -i
zpty -w z "PS1='' PROMPT='' RPROMPT=''; autoload -Uz compinit && compinit -u -D"
zpty -w z "ugs() { $ugs \"\$@\" }"
zpty -w z "source ${(q)script}"
# compadd is what every completion function ends in: record what it adds, then add it.
zpty -w z "compadd() { local -a hits; builtin compadd -A hits \"\$@\"; print -rl -- \"\${hits[@]}\" >> ${(q)out}; builtin compadd \"\$@\" }"
# Typing must wait for the line editor: keys that arrive while a command runs meet the terminal
# in cooked mode, which echoes them and applies Ctrl+U itself, so zle never sees the Tab. The
# prompt is drawn once zle has the terminal; it is set last and written so that the echo of the
# line that sets it cannot match what it renders to (the same goes for the marker below).
zpty -w z "zstyle ':completion:*' menu no; PS1='%(?.Z.Z)LE-READY> '"
zpty -r z junk '*ZLE-READY> *'
# Tab, then (queued behind it, so after completion ran) a new line that prints a marker.
zpty -w -n z "$line"$'\t'
zpty -w z $'\C-u'"print -r -- DONE-\$((6*7))"
zpty -r z junk '*DONE-42*'
zpty -d z
