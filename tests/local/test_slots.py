"""The local server's slots: a call pinned to a slot reaches that slot's server, and an OpenAI-compatible server
that has slots of its own (llama.cpp's ``id_slot``) is told the run's."""

from __future__ import annotations

import os

from langchain_core.messages import HumanMessage

from ariadne_lc.local import LocalModelServer, LocalServerSlots, OpenAICompatibleChat, SlotRoutedChat
from ariadne_lc.slots import pinned


def test_the_slot_field_is_sent_only_for_a_pinned_call_and_only_when_asked() -> None:
    asking = OpenAICompatibleChat(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", slot_field="id_slot")
    plain = OpenAICompatibleChat(model="m", base_url="http://127.0.0.1:9/v1", api_key="k")
    messages = [HumanMessage("hi")]
    assert "id_slot" not in asking._get_request_payload(messages)  # outside a pinned run
    with pinned(3):
        payload = asking._get_request_payload(messages)
        assert payload["id_slot"] == 3 and payload["cache_prompt"] is True
        assert "id_slot" not in plain._get_request_payload(
            messages
        ) and "cache_prompt" not in plain._get_request_payload(messages)


def test_each_call_reaches_the_server_of_its_slot(local_server: LocalModelServer) -> None:
    """Two servers answering to different names: the name in each reply says which one served the call."""
    with LocalModelServer(model_alias="second") as second:
        routes = [OpenAICompatibleChat(**s.chat_params(max_tokens=2)) for s in (local_server, second)]
        model = SlotRoutedChat(**local_server.chat_params(max_tokens=2), routes=routes)
        served = {}
        for slot in (0, 1, 2, 3):
            with pinned(slot):
                served[slot] = model.invoke("Say hi").response_metadata["model_name"]
        assert served == {0: local_server.model_alias, 1: "second", 2: local_server.model_alias, 3: "second"}
        assert model.invoke("Say hi").response_metadata["model_name"] == local_server.model_alias  # no slot: first


def test_slots_share_the_cores_and_start_and_stop_together() -> None:
    with LocalServerSlots(2, "smollm2") as servers:
        assert [s.n_threads for s in servers.servers] == [max(1, (os.cpu_count() or 1) // 2)] * 2
        assert all(s.is_running for s in servers.servers)
        model = servers.chat_model(max_tokens=2)
        with pinned(1):
            assert model.invoke("Say hi").content is not None
    assert not any(s.is_running for s in servers.servers)
