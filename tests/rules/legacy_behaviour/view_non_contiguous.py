"""Elementwise results keep a transposed input's layout (1.7): `.view()` of them raises; 0.3/0.4 results were
contiguous. `.reshape()` is the same view where one is possible and copies otherwise (TM511)."""
import torch

from _check import raises

torch.manual_seed(0)
output, target = torch.randn(8, 10), torch.randint(0, 10, (8,))
target[:3] = output[:3].argmax(1)  # some hits at k = 1

# The ImageNet accuracy(): pred.t() is permuted, and so is the comparison result.
_, pred = output.topk(5, 1, True, True)
pred = pred.t()
correct = pred.eq(target.view(1, -1).expand_as(pred))
assert not pred.is_contiguous() and not correct.is_contiguous()
assert correct.stride() == pred.stride() == (1, 5)
raises(lambda: correct[:5].view(-1), "view size is not compatible with input tensor's size and stride")
# The legacy result was contiguous: reshape gives exactly its numbers.
legacy = correct.contiguous()
for k in (1, 5):
    assert correct[:k].reshape(-1).float().sum(0) == legacy[:k].view(-1).float().sum(0)
assert legacy[:1].view(-1).float().sum(0) >= 3

# Arithmetic, conversions and clone keep the permuted layout too.
t = torch.randn(3, 4).t()
for result in (t * 2, t + 1, -t, torch.sigmoid(t), t.long(), t.clone(), t > 0):
    assert not result.is_contiguous()
    raises(lambda: result.view(-1), "view size is not compatible")
# Expanded or narrowed inputs (strides in order) give contiguous elementwise results: views work.
assert (torch.randn(1, 4).expand(3, 4) * 2).view(-1).shape == (12,)
assert (torch.randn(4, 5).narrow(1, 1, 2) + 0).view(-1).shape == (8,)
# `.contiguous()` restores the legacy layout.
assert (t * 2).contiguous().view(-1).shape == (12,)

# reshape is the view itself when one is possible (same storage, writes reach the original) ...
base = torch.randn(4, 6)
assert base.reshape(2, 12).data_ptr() == base.view(2, 12).data_ptr() == base.data_ptr()
same_shape = t.reshape(4, 3)
same_shape[0, 0] = 100.0
assert t[0, 0] == 100.0
# ... and a copy otherwise: in-place writes through it no longer reach the original.
copy_source = t * 1
flat = copy_source.reshape(-1)
flat.zero_()
assert copy_source.abs().sum() > 0
