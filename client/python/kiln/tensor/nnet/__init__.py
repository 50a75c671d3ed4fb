"""kiln.tensor.nnet (Aesara's aesara.tensor.nnet): softmax, log_softmax, relu, the
cross-entropies and the classifier ops, with the products (dot, tensordot, matmul, outer) that
the layers below kiln.tensor import from here; neighbours (images2neibs), batch normalization
(batchnorm) and the sigmoid approximations (sigm) are its submodules, as in Aesara, and so are
the convolutions (abstract_conv: conv2d, conv3d, their gradients, conv2d_transpose; conv: the
legacy conv2d)."""
from kiln.tensor.nnet import abstract_conv, basic, batchnorm, conv, neighbours, sigm  # noqa: F401
from kiln.tensor.nnet.abstract_conv import (abstract_conv2d, conv2d,  # noqa: F401
                                            conv2d_grad_wrt_inputs, conv2d_transpose, conv3d,
                                            separable_conv2d)
from kiln.tensor.nnet.basic import (  # noqa: F401
    binary_crossentropy, categorical_crossentropy, confusion_matrix,
    crossentropy_categorical_1hot, crossentropy_categorical_1hot_grad, crossentropy_softmax_1hot,
    crossentropy_softmax_1hot_with_bias, crossentropy_softmax_1hot_with_bias_dx,
    crossentropy_softmax_argmax_1hot_with_bias, crossentropy_softmax_max_and_argmax_1hot,
    crossentropy_softmax_max_and_argmax_1hot_with_bias, dot, elu, h_softmax, log_softmax,
    logsoftmax, matmul, outer, prepend_0_to_each_row, prepend_1_to_each_row,
    prepend_scalar_to_each_row, relu, selu, sigmoid, sigmoid_binary_crossentropy, softmax,
    softmax_grad_legacy, softmax_legacy, softmax_with_bias, softplus, softsign, tensordot)
from kiln.tensor.nnet.batchnorm import batch_normalization  # noqa: F401
from kiln.tensor.nnet.sigm import hard_sigmoid, ultra_fast_sigmoid  # noqa: F401
