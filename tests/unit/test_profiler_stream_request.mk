# The command's words and where a stream may go: the request's parser alone.
test_profiler_stream_request_SRCS := kernel/profiler/stream_request.c
