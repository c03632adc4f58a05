# cmake -DOUT=<x.tar.gz> -DNAME=<top dir> -DSTAGE=<dir> -DBIN=<stripped binary> -DMAN=<sparkops.1.gz>
#       -DSRC=<source dir> -P tarball.cmake
# The release tarball: one top directory holding the binary, its man page, the Prometheus rules,
# the Grafana dashboard, the checkpoint hooks (python/), the systemd unit and the install notes (packaging/INSTALL.md). Files are
# owned by 0:0 with fixed modes and sorted, so the same inputs give the same archive.
set(top ${STAGE}/${NAME})
file(REMOVE_RECURSE ${STAGE})
file(MAKE_DIRECTORY ${top}/prometheus ${top}/grafana ${top}/python)
file(COPY ${BIN} DESTINATION ${top} FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
     WORLD_READ WORLD_EXECUTE)
set(plain FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
file(COPY ${MAN} ${SRC}/packaging/sparkops-exporter.service ${SRC}/packaging/sparkops-guard.service DESTINATION ${top} ${plain})
file(COPY ${SRC}/packaging/INSTALL.md ${SRC}/packaging/sparkops.tmpfiles DESTINATION ${top} ${plain})
file(COPY ${SRC}/packaging/copyright DESTINATION ${top} ${plain})
file(COPY ${SRC}/deploy/prometheus/sparkops-rules.yml ${SRC}/deploy/prometheus/prometheus.yml
     DESTINATION ${top}/prometheus ${plain})
file(COPY ${SRC}/deploy/grafana/dashboard.json DESTINATION ${top}/grafana ${plain})
file(COPY ${SRC}/deploy/python/sparkops_callbacks.py DESTINATION ${top}/python ${plain})
file(GLOB_RECURSE files RELATIVE ${STAGE} ${top}/*)
list(SORT files)
execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf ${OUT} --mtime=1970-01-01 --format=gnutar -- ${files}
                WORKING_DIRECTORY ${STAGE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tar failed: ${rc}")
endif()
