"""kiln.tensor.nnet (Aesara's aesara.tensor.nnet): softmax, log_softmax, relu and the
cross-entropies, with the products (dot, tensordot, matmul, outer) that the layers below
kiln.tensor import from here. Aesara's convolutions, pooling and batch normalization have no
op in Kiln yet, and so no name here."""
from kiln.tensor.nnet import basic  # noqa: F401
from kiln.tensor.nnet.basic import (binary_crossentropy, categorical_crossentropy,  # noqa: F401
                                    crossentropy_categorical_1hot, dot, elu, hard_sigmoid,
                                    log_softmax, logsoftmax, matmul, outer, relu, selu,
                                    sigmoid, sigmoid_binary_crossentropy, softmax,
                                    softmax_legacy, softplus, softsign, tensordot)
