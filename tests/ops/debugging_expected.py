"""Expected values recorded with TensorFlow 2.21.0 (tensorflow.compat.v1, disable_v2_behavior) by
tests/record_tf_reference.py; do not edit by hand."""

ASSERTIONS = {'equal_static_fail': ['InvalidArgumentError', 'Condition x == y did not hold element-wise:'],
 'integer_fail': ['TypeError',
                  'Expected "x" to be integer type.  Found: zeros:0 of dtype <dtype: \'float32\'>'],
 'is_non_decreasing': [True, False, False, True],
 'is_numeric_tensor': [True, False, False],
 'less_static_fail': ['InvalidArgumentError', 'too big'],
 'names': {'debugging_equal': 'assert_equal_5',
           'equal': 'assert_equal_1',
           'equal_message': 'assert_equal_3',
           'greater': 'assert_greater',
           'greater_equal': 'assert_greater_equal',
           'less': 'assert_less',
           'less_equal': 'assert_less_equal',
           'near': 'assert_near',
           'negative': 'assert_negative/assert_less',
           'non_negative': 'assert_non_negative/assert_less_equal',
           'non_positive': 'assert_non_positive/assert_less_equal',
           'none_equal': 'assert_none_equal',
           'positive': 'assert_positive/assert_less',
           'rank': 'assert_rank/static_checks_determined_all_ok'},
 'proper_iterable_fail': ['TypeError',
                          'Expected argument "values" to be a "proper" iterable.  Found: <class '
                          "'str'>"],
 'rank_at_least_static_fail': ['ValueError',
                               'Tensor zeros_1:0 must have rank at least 2.  Received rank 1, shape '
                               '(2,)'],
 'rank_in_static_fail': ['ValueError',
                         'Tensor zeros_2:0 must have rank in (0, 2).  Received rank 1, shape (2,)'],
 'rank_static_fail': ['ValueError',
                      'm.  Tensor zeros_3:0 must have rank 1.  Received rank 2, shape (2, 3)'],
 'run_debugging_equal_[-1.0, 0.5]': ['ok'],
 'run_debugging_equal_[1.0, 2.0]': ['ok'],
 'run_debugging_equal_[1.0, 3.0]': ['ok'],
 'run_equal_[-1.0, 0.5]': ['InvalidArgumentError',
                           'assertion failed: [Condition x == y did not hold element-wise:] [x (x:0) = '
                           '] [-1 0.5] [y (assert_equal_1/y:0) = ] [1 2]'],
 'run_equal_[1.0, 2.0]': ['ok'],
 'run_equal_[1.0, 3.0]': ['InvalidArgumentError',
                          'assertion failed: [Condition x == y did not hold element-wise:] [x (x:0) = ] '
                          '[1 3] [y (assert_equal_1/y:0) = ] [1 2]'],
 'run_equal_message_[-1.0, 0.5]': ['InvalidArgumentError',
                                   'assertion failed: [custom] [Condition x == y did not hold '
                                   'element-wise:] [x (x:0) = ] [-1...] [y (assert_equal_3/y:0) = ] '
                                   '[1...]'],
 'run_equal_message_[1.0, 2.0]': ['ok'],
 'run_equal_message_[1.0, 3.0]': ['InvalidArgumentError',
                                  'assertion failed: [custom] [Condition x == y did not hold '
                                  'element-wise:] [x (x:0) = ] [1...] [y (assert_equal_3/y:0) = ] '
                                  '[1...]'],
 'run_greater_[-1.0, 0.5]': ['InvalidArgumentError',
                             'assertion failed: [Condition x > y did not hold element-wise:] [x (x:0) = '
                             '] [-1 0.5] [y (assert_greater/y:0) = ] [0]'],
 'run_greater_[1.0, 2.0]': ['ok'],
 'run_greater_[1.0, 3.0]': ['ok'],
 'run_greater_equal_[-1.0, 0.5]': ['InvalidArgumentError',
                                   'assertion failed: [Condition x >= y did not hold element-wise:] [x '
                                   '(x:0) = ] [-1 0.5] [y (assert_greater_equal/y:0) = ] [1]'],
 'run_greater_equal_[1.0, 2.0]': ['ok'],
 'run_greater_equal_[1.0, 3.0]': ['ok'],
 'run_less_[-1.0, 0.5]': ['ok'],
 'run_less_[1.0, 2.0]': ['InvalidArgumentError',
                         'assertion failed: [Condition x < y did not hold element-wise:] [x (x:0) = ] '
                         '[1 2] [y (assert_less/y:0) = ] [2]'],
 'run_less_[1.0, 3.0]': ['InvalidArgumentError',
                         'assertion failed: [Condition x < y did not hold element-wise:] [x (x:0) = ] '
                         '[1 3] [y (assert_less/y:0) = ] [2]'],
 'run_less_equal_[-1.0, 0.5]': ['ok'],
 'run_less_equal_[1.0, 2.0]': ['ok'],
 'run_less_equal_[1.0, 3.0]': ['InvalidArgumentError',
                               'assertion failed: [Condition x <= y did not hold element-wise:] [x '
                               '(x:0) = ] [1 3] [y (assert_less_equal/y:0) = ] [2]'],
 'run_near_[-1.0, 0.5]': ['InvalidArgumentError',
                          'assertion failed: [] [x and y not equal to tolerance rtol = '
                          'Tensor(\\"assert_near/rtol:0\\", shape=(), dtype=float32), atol = '
                          'Tensor(\\"assert_near/atol:0\\", shape=(), dtype=float32)] [x (x:0) = ] [-1 '
                          '0.5] [y (assert_near/y:0) = ] [1 2.0001]'],
 'run_near_[1.0, 2.0]': ['ok'],
 'run_near_[1.0, 3.0]': ['InvalidArgumentError',
                         'assertion failed: [] [x and y not equal to tolerance rtol = '
                         'Tensor(\\"assert_near/rtol:0\\", shape=(), dtype=float32), atol = '
                         'Tensor(\\"assert_near/atol:0\\", shape=(), dtype=float32)] [x (x:0) = ] [1 3] '
                         '[y (assert_near/y:0) = ] [1 2.0001]'],
 'run_negative_[-1.0, 0.5]': ['InvalidArgumentError',
                              'assertion failed: [neg.  ] [Condition x < 0 did not hold element-wise:] '
                              '[x (x:0) = ] [-1 0.5]'],
 'run_negative_[1.0, 2.0]': ['InvalidArgumentError',
                             'assertion failed: [neg.  ] [Condition x < 0 did not hold element-wise:] '
                             '[x (x:0) = ] [1 2]'],
 'run_negative_[1.0, 3.0]': ['InvalidArgumentError',
                             'assertion failed: [neg.  ] [Condition x < 0 did not hold element-wise:] '
                             '[x (x:0) = ] [1 3]'],
 'run_non_negative_[-1.0, 0.5]': ['InvalidArgumentError',
                                  'assertion failed: [] [Condition x >= 0 did not hold element-wise:] '
                                  '[x (x:0) = ] [-1 0.5]'],
 'run_non_negative_[1.0, 2.0]': ['ok'],
 'run_non_negative_[1.0, 3.0]': ['ok'],
 'run_non_positive_[-1.0, 0.5]': ['InvalidArgumentError',
                                  'assertion failed: [] [Condition x <= 0 did not hold element-wise:x '
                                  '(x:0) = ] [-1 0.5]'],
 'run_non_positive_[1.0, 2.0]': ['InvalidArgumentError',
                                 'assertion failed: [] [Condition x <= 0 did not hold element-wise:x '
                                 '(x:0) = ] [1 2]'],
 'run_non_positive_[1.0, 3.0]': ['InvalidArgumentError',
                                 'assertion failed: [] [Condition x <= 0 did not hold element-wise:x '
                                 '(x:0) = ] [1 3]'],
 'run_none_equal_[-1.0, 0.5]': ['ok'],
 'run_none_equal_[1.0, 2.0]': ['ok'],
 'run_none_equal_[1.0, 3.0]': ['ok'],
 'run_positive_[-1.0, 0.5]': ['InvalidArgumentError',
                              'assertion failed: [] [Condition x > 0 did not hold element-wise:] [x '
                              '(x:0) = ] [-1 0.5]'],
 'run_positive_[1.0, 2.0]': ['ok'],
 'run_positive_[1.0, 3.0]': ['ok'],
 'run_rank_[-1.0, 0.5]': ['ok'],
 'run_rank_[1.0, 2.0]': ['ok'],
 'run_rank_[1.0, 3.0]': ['ok'],
 'scalar_fail': ['ValueError', 'Expected scalar shape for zeros_4:0, saw shape: (2,).'],
 'static_ok_names': ['assert_rank_2/static_checks_determined_all_ok',
                     'assert_type_1/statically_determined_correct_type',
                     'assert_integer_1/statically_determined_was_integer',
                     'Const_3:0'],
 'type_fail': ['TypeError', 'zeros_5:0 must be of type tf.int32; got tf.float32']}

NUMERICS = {'check_name': ['group_deps', 'NoOp'],
 'check_ops': ['CheckNumerics',
               'CheckNumerics_1',
               'CheckNumerics_2',
               'CheckNumerics_3',
               'CheckNumerics_4'],
 'grad_nan': ['InvalidArgumentError', 'y bad : Tensor had Inf values'],
 'inf': ['InvalidArgumentError', 'log:0 : Tensor had Inf values'],
 'nan': ['InvalidArgumentError', 'log:0 : Tensor had NaN values'],
 'ok': ['ok', 1.3862943649291992]}

PRINTING = {'print_grad': [[3.0, 3.0]],
 'print_names': ['Print:0', 'Print', 'Print_1:0'],
 'print_stderr': 'x is [[1.5 2 3][4...]...][2 3][text]\nfirst: [[7]]\nfirst: [[7]]\n',
 'print_v2_file': 'to file [1 2]\n',
 'print_v2_floats': ['[[0.1 -2.25e-05]\n [1e+10 3]]\n', ''],
 'print_v2_names': {'floats': ['PrintV2_5', 'PrintV2'],
                    'scalar': ['PrintV2_6', 'PrintV2'],
                    'sep_end': ['PrintV2_4', 'PrintV2'],
                    'stderr': ['PrintV2', 'PrintV2'],
                    'stdout': ['PrintV2_1', 'PrintV2'],
                    'summarize': ['PrintV2_2', 'PrintV2'],
                    'summarize_all': ['PrintV2_3', 'PrintV2']},
 'print_v2_scalar': ['2.5 -3\n', ''],
 'print_v2_sep_end': ['x|1|"s"!\n', ''],
 'print_v2_stderr': ['', "a [1.5 2] 7 {'k': 3}\n"],
 'print_v2_stdout': ['[[0 1 2 3]\n [4 5 6 7]\n [8 9 10 11]]\n', ''],
 'print_v2_summarize': ['[0 1 ... 8 9]\n', ''],
 'print_v2_summarize_all': ['[0 1 2 3 4 5 6 7 8 9]\n', ''],
 'print_value': [[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]]}

PYTHON_FUNCTIONS = {'bad': ['InvalidArgumentError', 'ValueError: bad value 3'],
 'calls': ['float32'],
 'grad': ['ok', [None]],
 'names': ['scale:0', 'scale:1', 'PyFunc', 'PyFunc', 'PyFunc', 'PyFuncStateless'],
 'shapes': ['<unknown>', '<unknown>'],
 'single_is_tensor': True,
 'strings': ['AB', 'C'],
 'values': [[2.0, 5.0], 2, [2, 3], 2],
 'wrong_dtype': ['InvalidArgumentError',
                 '0-th value returned by pyfunc_N is double, but expects float']}
