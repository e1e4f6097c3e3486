"""Files written by TensorFlow 2.21 (``tf.io.TFRecordWriter``, ``tf.train.Example``), base64, for the record
reader and parser tests: recorded once with ``/work/tfenv`` (see the test modules for what they hold)."""

# the records b"", b"a", b"hello world", bytes(range(256)) * 2, uncompressed / GZIP / ZLIB
TFRECORD_NONE = (
    "AAAAAAAAAAApA5gH2OqCogEAAAAAAAAAAXXeQWF4buQoCwAAAAAAAACGFfUEaGVsbG8gd29ybGQAfthtAAIAAAAAAAA1o7d4AAEC"
    "AwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xN"
    "Tk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeY"
    "mZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj"
    "5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0u"
    "LzAxMjM0NTY3ODk6Ozw9Pj9AQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVpbXF1eX2BhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5"
    "ent8fX5/gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp+goaKjpKWmp6ipqqusra6vsLGys7S1tre4ubq7vL2+v8DBwsPE"
    "xcbHyMnKy8zNzs/Q0dLT1NXW19jZ2tvc3d7f4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v/5Rjh/"
)

TFRECORD_GZIP = (
    "H4sIAAAAAAAAA2NggABN5hnsN141LWKE8hlL7zkmVuQ90eCGCrSJfmXJSM3JyVcozy/KSWGou5HLwASRMl28vYKBkYmZhZWNnYOT"
    "i5uHl49fQFBIWERUTFxCUkpaRlZOXkFRSVlFVU1dQ1NLW0dXT9/A0MjYxNTM3MLSytrG1s7ewdHJ2cXVzd3D08vbx9fPPyAwKDgk"
    "NCw8IjIqOiY2Lj4hMSk5JTUtPSMzKzsnNy+/oLCouKS0rLyisqq6prauvqGxqbmlta29o7Oru6e3r3/CxEmTp0ydNn3GzFmz58yd"
    "N3/BwkWLlyxdtnzFylWr16xdt37Dxk2bt2zdtn3Hzl279+zdt//AwUOHjxw9dvzEyVOnz5w9d/7CxUuXr1y9dv3GzVu379y9d//B"
    "w0ePnzx99vzFy1ev37x99/7Dx0+fv3z99v3Hz1+///z993+k+/+nm0U9APH+q6dMAgAA"
)

TFRECORD_ZLIB = (
    "eJxjYIAATeYZ7DdeNS1ihPIZS+85JlbkPdHghgq0iX5lyUjNyclXKM8vyklhqLuRy8AEkTJdvL2CgZGJmYWVjZ2Dk4ubh5ePX0BQ"
    "SFhEVExcQlJKWkZWTl5BUUlZRVVNXUNTS1tHV0/fwNDI2MTUzNzC0sraxtbO3sHRydnF1c3dw9PL28fXzz8gMCg4JDQsPCIyKjom"
    "Ni4+ITEpOSU1LT0jMys7Jzcvv6CwqLiktKy8orKquqa2rr6hsam5pbWtvaOzq7unt69/wsRJk6dMnTZ9xsxZs+fMnTd/wcJFi5cs"
    "XbZ8xcpVq9esXbd+w8ZNm7ds3bZ9x85du/fs3bf/wMFDh48cPXb8xMlTp8+cPXf+wsVLl69cvXb9xs1bt+/cvXf/wcNHj588ffb8"
    "xctXr9+8fff+w8dPn798/fb9x89fv//8/fd/pPv/p5tFPQAjfRJn"
)

# three tf.train.Examples (features id, score, tags, seq, idx, val, opt) in one uncompressed TFRecord file
EXAMPLES_TFRECORD = (
    "bQAAAAAAAAA9TeZxCmsKCgoEdGFncxICCgAKDwoDdmFsEggSBgoEAAAAAAoVCgVzY29yZRIMEgoKCAAAAAAAAKC/CgsKAmlkEgUa"
    "AwoBAAoPCgNvcHQSCBIGCgQAAOBACgkKA3NlcRICGgAKDAoDaWR4EgUaAwoBAfU4Yg9pAAAAAAAAADYLPG4KZwoOCgR0YWdzEgYK"
    "BAoCdDAKEwoDdmFsEgwSCgoIAADAPwAAAEAKFQoFc2NvcmUSDBIKCggAAAA/AACgvwoLCgJpZBIFGgMKAQEKDQoDc2VxEgYaBAoC"
    "AAEKDQoDaWR4EgYaBAoCBAF7TIGpewAAAAAAAAAb98/OCnkKEgoEdGFncxIKCggKAnQwCgJ0MQoPCgN2YWwSCBIGCgQAAEBAChUK"
    "BXNjb3JlEgwSCgoIAACAPwAAoL8KCwoCaWQSBRoDCgECCg8KA29wdBIIEgYKBAAAEEEKDwoDc2VxEggaBgoEAAECAwoMCgNpZHgS"
    "BRoDCgECkuTGyg=="
)
