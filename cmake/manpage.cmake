# cmake -DSPARKOPS=<binary> -DEMULATOR=<list> -DOUT=<path>.1.gz -P manpage.cmake
# Writes sparkops(1) from the binary's own `help`, `--version` and `help COMMAND` output, so the man
# page always matches the build. Text sections are kept verbatim (.nf); roff control characters are
# escaped. Compressed with gzip -9n (no timestamp), as Debian policy asks.

# run_sparkops(<out> <rc-out or ""> args...): with "" a failure stops the build.
function(run_sparkops out_var rc_var)
  execute_process(COMMAND ${EMULATOR} ${SPARKOPS} ${ARGN}
                  OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(rc_var)
    set(${rc_var} ${rc} PARENT_SCOPE)
  elseif(NOT rc EQUAL 0)
    message(FATAL_ERROR "sparkops ${ARGN} failed (${rc}): ${err}")
  endif()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Verbatim block: backslashes escaped, lines starting with . or ' protected.
function(roff_verbatim out_var text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  string(REGEX REPLACE "\n+$" "" text "${text}")
  set(${out_var} ".nf\n${text}\n.fi\n" PARENT_SCOPE)
endfunction()

run_sparkops(help "" help)
run_sparkops(version "" --version)
string(REGEX MATCH "^sparkops ([^ ]+) - ([^\n]*)" _ "${help}")
set(ver "${CMAKE_MATCH_1}")
set(summary "${CMAKE_MATCH_2}")
if(NOT ver)
  message(FATAL_ERROR "unexpected first help line: ${help}")
endif()
string(REGEX REPLACE "\n$" "" version "${version}")

# Commands: the indented lines between "commands:" and the next blank line.
string(REGEX MATCH "commands:\n(([ ][^\n]*\n)+)" _ "${help}")
string(REGEX MATCHALL "\n  [a-z][a-z0-9-]*" names "\n${CMAKE_MATCH_1}")

roff_verbatim(help_roff "${help}")
string(REPLACE "-" "\\-" summary_roff "${summary}")
set(page ".TH SPARKOPS 1 \"\" \"sparkops ${ver}\" \"User Commands\"
.SH NAME
sparkops \\- ${summary_roff}
.SH SYNOPSIS
.B sparkops
[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]
.SH DESCRIPTION
${help_roff}.SH COMMANDS
")
foreach(n ${names})
  string(STRIP "${n}" n)
  run_sparkops(cmd_help cmd_rc help ${n})
  if(NOT cmd_rc EQUAL 0 OR cmd_help STREQUAL "")
    continue()  # a command without --help text in this build (placeholder): listed above only
  endif()
  roff_verbatim(cmd_roff "${cmd_help}")
  string(APPEND page ".SS ${n}\n${cmd_roff}")
endforeach()
roff_verbatim(version_roff "${version}")
string(APPEND page ".SH FILES
.TP
.I /usr/share/sparkops/
Prometheus alerting rules and the Grafana dashboard for \\fBsparkops exporter\\fR.
.TP
.I /lib/systemd/system/sparkops\\-exporter.service
Runs \\fBsparkops exporter\\fR on 127.0.0.1:9842; installed disabled
(\\fBsystemctl enable \\-\\-now sparkops\\-exporter\\fR to start it).
.SH VERSION
${version_roff}")

get_filename_component(dir "${OUT}" DIRECTORY)
string(REGEX REPLACE "\\.gz$" "" plain "${OUT}")
file(WRITE "${plain}" "${page}")
execute_process(COMMAND gzip -9nf "${plain}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${plain} failed")
endif()
