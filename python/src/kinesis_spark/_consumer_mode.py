"""``ConsumerMode``: how the source reads shards (option ``consumerMode``)."""

from __future__ import annotations

from enum import Enum

__all__ = ["ConsumerMode"]


class ConsumerMode(str, Enum):
    """How the source reads each shard.

    Examples
    --------
    >>> ConsumerMode.EFO.value
    'efo'
    >>> ConsumerMode("polling") is ConsumerMode.POLLING
    True
    """

    #: GetRecords calls, paced per shard (the default). Shares each shard's 2 MB/s with other readers.
    POLLING = "polling"
    #: Enhanced fan-out (SubscribeToShard): a registered consumer with its own 2 MB/s per shard, pushed to.
    EFO = "efo"

    def __str__(self) -> str:
        return self.value
