# bash completion for daolease: subcommands, their verbs (`stream create`)
# and their long options, read from the binary's own --help texts, so the
# completion follows whatever the installed binary accepts. Paths complete
# as files. Installed to share/bash-completion/completions/daolease; or
# `source completion/daolease.bash` by hand.

# The words of `daolease CMD --help` (CMD empty: the top level) that match
# what is asked: commands, verbs or long options.
_daolease_help_words() {
    local exe=$1 cmd=$2 what=$3
    case $what in
    commands)
        "$exe" --help 2>/dev/null |
            sed -n '/^commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p' ;;
    verbs)
        "$exe" "$cmd" --help 2>/dev/null |
            sed -n "s/^\(usage:\)\{0,1\} *daolease $cmd \([a-z][a-z0-9-]*\).*/\2/p" |
            grep -v '^-' ;;
    options)
        "$exe" "$cmd" --help 2>/dev/null |
            grep -oE -- '--[a-z][a-z0-9-]*' | sort -u ;;
    esac
}

_daolease() {
    local cur=${COMP_WORDS[COMP_CWORD]} exe=${COMP_WORDS[0]} cmd= i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [ -z "$cmd" ]; then
        COMPREPLY=($(compgen -W "$(_daolease_help_words "$exe" '' commands) --help --version" -- "$cur"))
        return
    fi
    case $cur in
    -*)
        COMPREPLY=($(compgen -W "$(_daolease_help_words "$exe" "$cmd" options)" -- "$cur"))
        return ;;
    esac
    # the verb of a command that has them (stream create, fact encode)
    if [ "$i" -eq $((COMP_CWORD - 1)) ]; then
        local verbs
        verbs=$(_daolease_help_words "$exe" "$cmd" verbs)
        if [ -n "$verbs" ]; then
            COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
            return
        fi
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _daolease daolease
