#!/bin/bash
# `claim2core completion bash` offers what the CLI accepts: subcommands, options, a positional's
# choices (get's resources) and an option's values (get -o table|wide|name|json|yaml), and after
# an option's value the command's words again. usage: cli_completion_test.sh CLAIM2CORE
set -u
CLI=$1
source <("$CLI" completion bash) || { echo "FAIL: the bash script does not load"; exit 1; }
fails=0
offers() {  # offers "WANT" WORD... : the completions of the last word
  local want=$1; shift
  COMP_WORDS=(claim2core "$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  _claim2core
  local got="${COMPREPLY[*]}"
  if [[ " $got " == *" $want "* ]]; then echo "ok   claim2core $* -> $want"
  else echo "FAIL claim2core $*: wanted '$want' in '$got'"; fails=$((fails + 1)); fi
}
offers get ge
offers "table wide name json yaml" get -o ''
offers wide get intents -o w
offers "intents intent" get int
offers "--watch -w" get intents -o json -
offers --max-events get intents -w --m
offers "table json yaml" status -o ''
if [[ $("$CLI" completion zsh | head -1) != "#compdef claim2core" ]]; then echo "FAIL zsh script header"; fails=$((fails + 1)); fi
[[ $fails == 0 ]] && echo "all completions offered" || exit 1
