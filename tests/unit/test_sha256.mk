test_sha256_SRCS :=
