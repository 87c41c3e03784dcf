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
# Markers are computed ($((...))) so that the echo of the typed line never matches them: the
# terminal may echo typed-ahead input while a command runs, long before the command has run.
zpty -w z "zstyle ':completion:*' menu no; print -r -- READY-\$((6*7))"
zpty -r z junk '*READY-42*'
# Tab, then (queued behind it, so after completion ran) a new line that prints a marker.
zpty -w -n z "$line"$'\t'
zpty -w z $'\C-u'"print -r -- DONE-\$((6*7))"
zpty -r z junk '*DONE-42*'
zpty -d z
