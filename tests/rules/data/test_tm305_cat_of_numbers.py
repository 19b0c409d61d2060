"""TM305: `torch.cat` of one-number losses (1-element vectors in 0.3) becomes `torch.stack`; the legacy
form raises on current torch, the migrated one gives the vector 0.3 gave."""
import pytest
import torch
from torch.distributions import Categorical

from data_support import applied, execute, migrate

REINFORCE = """
import torch
from torch.distributions import Categorical

torch.manual_seed(0)
logits = torch.randn(6, 4, requires_grad=True)
saved, rewards = [], []
for t in range(6):
    probs = torch.softmax(logits[t], dim=0)
    m = Categorical(probs)
    action = m.sample()
    saved.append(m.log_prob(action))
    rewards.append(0.5 + t)
policy_loss = []
for log_prob, reward in zip(saved, rewards):
    policy_loss.append(-log_prob * reward)
policy_loss = torch.cat(policy_loss).sum()
policy_loss.backward()
"""


def test_a_reinforce_update_runs_and_gives_the_0_3_sum_and_gradient():
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        execute(REINFORCE)
    outcome = migrate(REINFORCE)
    assert applied(outcome) == ["TM305"] and "torch.stack(policy_loss).sum()" in outcome.text
    migrated = execute(outcome.text)
    torch.manual_seed(0)
    logits = torch.randn(6, 4, requires_grad=True)
    terms = []
    for t in range(6):
        m = Categorical(torch.softmax(logits[t], dim=0))
        terms.append((-m.log_prob(m.sample()) * (0.5 + t)).view(1))  # 0.3: each a (1,) vector
    expected = torch.cat(terms).sum()
    expected.backward()
    assert torch.equal(migrated["policy_loss"], expected)
    assert torch.equal(migrated["logits"].grad, logits.grad)


def test_batched_log_probs_are_vectors_and_stay_concatenated():
    batched = REINFORCE.replace("logits[t]", "logits[t:t + 1]").replace("dim=0", "dim=1")
    outcome = migrate(batched)
    assert "torch.cat(policy_loss)" in outcome.text
    assert "TM305" not in applied(outcome)
    assert execute(outcome.text)["policy_loss"].dim() == 0

