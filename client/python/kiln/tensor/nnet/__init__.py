"""kiln.tensor.nnet (Aesara's aesara.tensor.nnet): softmax, log_softmax, relu and the
cross-entropies, with the products (dot, tensordot, matmul, outer) that the layers below
kiln.tensor import from here; neighbours (images2neibs), batch normalization (batchnorm) and
the sigmoid approximations (sigm) are its submodules, as in Aesara, and so are the
convolutions (abstract_conv: conv2d, conv3d, their gradients, conv2d_transpose; conv: the
legacy conv2d)."""
from kiln.tensor.nnet import abstract_conv, basic, conv  # noqa: F401
from kiln.tensor.nnet.abstract_conv import (abstract_conv2d, conv2d,  # noqa: F401
                                            conv2d_grad_wrt_inputs, conv2d_transpose, conv3d,
                                            separable_conv2d)
from kiln.tensor.nnet.basic import (binary_crossentropy, categorical_crossentropy,  # noqa: F401
                                    crossentropy_categorical_1hot, dot, elu,
                                    log_softmax, logsoftmax, matmul, outer, relu, selu,
                                    sigmoid, sigmoid_binary_crossentropy, softmax,
                                    softmax_legacy, softplus, softsign, tensordot)
# The rest of aesara.tensor.nnet: the classifier ops and losses, neighbours, batch normalization
# and the sigmoid approximations.
from kiln.tensor.nnet import batchnorm, neighbours, sigm  # noqa: F401,E402
from kiln.tensor.nnet.basic import (  # noqa: F401,E402
    confusion_matrix, crossentropy_categorical_1hot_grad, crossentropy_softmax_1hot,
    crossentropy_softmax_1hot_with_bias, crossentropy_softmax_1hot_with_bias_dx,
    crossentropy_softmax_argmax_1hot_with_bias, crossentropy_softmax_max_and_argmax_1hot,
    crossentropy_softmax_max_and_argmax_1hot_with_bias, h_softmax, prepend_0_to_each_row,
    prepend_1_to_each_row, prepend_scalar_to_each_row, softmax_grad_legacy, softmax_with_bias)
from kiln.tensor.nnet.batchnorm import batch_normalization  # noqa: F401,E402
from kiln.tensor.nnet.sigm import hard_sigmoid, ultra_fast_sigmoid  # noqa: F401,E402
