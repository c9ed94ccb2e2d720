-- SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
--[[
RSVP credit-based flow control (draft-hu-rtgwg-cbfc-rsvp-01) as longhaul
speaks it (docs/rsvp.md), in Wireshark and tshark.

Wireshark 4.0's own RSVP dissector decodes the common header, SESSION,
RSVP_HOP, TIME_VALUES, FILTER_SPEC, SENDER_TEMPLATE, ERROR_SPEC and
MESSAGE_ID objects, but not the draft's message types 28-31 ("Unknown (28)")
nor longhaul's vendor-private Credit (class 124) and RDMA_QP (class 125)
objects (raw "Private object" data). This file takes IP protocol 46, lets the
built-in dissector run first, then adds a "longhaul RSVP" tree: the message
type by name, the Credit and RDMA_QP fields, the RDMA flow, the checksum and
the checks user/lib/rsvp.c makes (a malformed message gets an expert item
naming the reason, as the agent counts it).

  tshark -X lua_script:user/wireshark/longhaul-rsvp.lua -r capture.pcap -Y longhaul.rsvp
  (with longhaul.lua: two -X lua_script: options), or copy both files into
  ~/.local/lib/wireshark/plugins/ (Wireshark >= 4.0, Lua 5.2).

Filter fields: longhaul.rsvp.msg_type, .checksum, .checksum.good, .length,
.flow.src, .flow.dst, .flow.dqpn, .hop, .lih, .credit.enterprise, .credit.unit,
.credit.flags, .credit.init, .credit.heartbeat, .credit.probe, .credit.value,
.credit.limit, .credit.accepted, .credit.bytes, .qp.enterprise, .qp.dqpn, .integrity.key_id,
.integrity.seq, .ignored, .forwarded; expert:
longhaul.rsvp.malformed (the reason in its text), longhaul.rsvp.foreign.
]]

local LH_ENTERPRISE = 32473 -- RFC 5612's documentation number (user/lib/rsvp.h)
local CLASS_CREDIT, CLASS_RDMA_QP = 124, 125
local CREDIT_LEN, CREDIT_ACC_LEN, RDMA_QP_LEN = 24, 32, 12
-- RFC 2747 INTEGRITY: allowed in every message; C-Type 1 with HMAC-MD5's 16-byte digest
local CLASS_INTEGRITY, INTEGRITY_LEN = 4, 36
local UNIT_MAX = 40

local band, bor, rshift = bit32.band, bit32.bor, bit32.rshift

local msg_names = {
	[3] = "PathErr",
	[4] = "ResvErr",
	[28] = "Credit-based Path initialization",
	[29] = "Credit-based Reserve",
	[30] = "Credit-based End",
	[31] = "Credit-based End ACK",
}
local short_names = {
	[3] = "PathErr", [4] = "ResvErr", [28] = "CB Path init", [29] = "CB Reserve",
	[30] = "CB End", [31] = "CB End ACK",
}
local unit_names = { [0] = "byte", [10] = "KiB", [20] = "MiB (the draft's MB)", [30] = "GiB", [40] = "TiB" }

-- The objects each type must carry and may carry (user/lib/rsvp.c msg_types):
-- class numbers 1 SESSION, 3 RSVP_HOP, 5 TIME_VALUES, 6 ERROR_SPEC,
-- 10 FILTER_SPEC, 11 SENDER_TEMPLATE, 23 MESSAGE_ID, 24 MESSAGE_ID_ACK, 124, 125
-- (and 4 INTEGRITY in any of them)
local class_names = {
	[1] = "SESSION", [3] = "RSVP_HOP", [4] = "INTEGRITY", [5] = "TIME_VALUES", [6] = "ERROR_SPEC",
	[10] = "FILTER_SPEC", [11] = "SENDER_TEMPLATE", [23] = "MESSAGE_ID",
	[24] = "MESSAGE_ID_ACK", [124] = "CREDIT", [125] = "RDMA_QP",
}
local rules = {
	[3] = { must = { 1, 6 }, may = { 11, 125, 24 } },
	[4] = { must = { 1, 3, 6 }, may = { 10, 125, 24 } },
	[28] = { must = { 1, 11, 125, 3, 5, 23 }, may = { 124 } },
	[29] = { must = { 1, 10, 125, 3, 124, 23 }, may = { 5, 24 } },
	[30] = { must = { 1, 11, 125, 3, 23 }, may = {} },
	[31] = { must = { 1, 10, 125, 3, 24 }, may = {} },
}
-- object length per known class: C-Type 1 (IPv4), C-Type 2 (IPv6) or nil
local shapes = {
	[1] = { 12, 24 }, [3] = { 12, 24 }, [6] = { 12, 24 }, [10] = { 12, 24 }, [11] = { 12, 24 },
	[5] = { 8 }, [23] = { 12 }, [24] = { 12 }, [124] = { CREDIT_LEN }, [125] = { RDMA_QP_LEN },
	[4] = { INTEGRITY_LEN },
}

local p = Proto("longhaul_rsvp", "longhaul RSVP credit-based flow control")

local f = {
	msg_type = ProtoField.uint8("longhaul.rsvp.msg_type", "Message type", base.DEC, msg_names),
	length = ProtoField.uint16("longhaul.rsvp.length", "RSVP length", base.DEC),
	checksum = ProtoField.uint16("longhaul.rsvp.checksum", "Checksum", base.HEX),
	checksum_good = ProtoField.bool("longhaul.rsvp.checksum.good", "Checksum good"),
	flow_src = ProtoField.string("longhaul.rsvp.flow.src", "RDMA flow source (SENDER_TEMPLATE / FILTER_SPEC)"),
	flow_dst = ProtoField.string("longhaul.rsvp.flow.dst", "RDMA flow destination (SESSION)"),
	flow_dqpn = ProtoField.uint24("longhaul.rsvp.flow.dqpn", "RDMA flow destination QP", base.HEX),
	hop = ProtoField.string("longhaul.rsvp.hop", "Hop (RSVP_HOP)"),
	lih = ProtoField.uint32("longhaul.rsvp.lih", "Path (RSVP_HOP logical interface handle)", base.DEC),
	credit = ProtoField.bytes("longhaul.rsvp.credit", "Credit object"),
	credit_ent = ProtoField.uint32("longhaul.rsvp.credit.enterprise", "Enterprise number", base.DEC),
	credit_unit = ProtoField.uint8("longhaul.rsvp.credit.unit", "Unit (log2 bytes)", base.DEC, unit_names),
	credit_flags = ProtoField.uint8("longhaul.rsvp.credit.flags", "Flags", base.HEX),
	credit_init = ProtoField.bool("longhaul.rsvp.credit.init", "Initial buffer (answer to a Path init)", 8,
		nil, 0x01),
	credit_hb = ProtoField.bool("longhaul.rsvp.credit.heartbeat", "Heartbeat (no buffer freed)", 8, nil, 0x02),
	credit_probe = ProtoField.bool("longhaul.rsvp.credit.probe", "Probe (a Path asking for Accepted)", 8, nil,
		0x04),
	credit_accepted = ProtoField.uint64("longhaul.rsvp.credit.accepted",
		"Accepted (bytes of the flow taken in, cumulative, in units)", base.DEC),
	credit_value = ProtoField.uint32("longhaul.rsvp.credit.value", "Credit (in units)", base.DEC),
	credit_limit = ProtoField.uint64("longhaul.rsvp.credit.limit", "Credit limit (cumulative, in units)",
		base.DEC),
	credit_bytes = ProtoField.uint64("longhaul.rsvp.credit.bytes", "Credit in bytes", base.DEC),
	qp = ProtoField.bytes("longhaul.rsvp.qp", "RDMA_QP object"),
	qp_ent = ProtoField.uint32("longhaul.rsvp.qp.enterprise", "Enterprise number", base.DEC),
	qp_dqpn = ProtoField.uint24("longhaul.rsvp.qp.dqpn", "Destination QP", base.HEX),
	integrity_key = ProtoField.uint64("longhaul.rsvp.integrity.key_id", "INTEGRITY Key Identifier", base.HEX),
	integrity_seq = ProtoField.uint64("longhaul.rsvp.integrity.seq", "INTEGRITY Sequence Number", base.DEC),
	ignored = ProtoField.uint8("longhaul.rsvp.ignored", "Unknown objects ignored (Class-Num 10bbbbbb)"),
	forwarded = ProtoField.uint8("longhaul.rsvp.forwarded", "Unknown objects to forward (Class-Num 11bbbbbb)"),
}
p.fields = {
	f.msg_type, f.length, f.checksum, f.checksum_good, f.flow_src, f.flow_dst, f.flow_dqpn, f.hop, f.lih,
	f.credit, f.credit_ent, f.credit_unit, f.credit_flags, f.credit_init, f.credit_hb, f.credit_probe,
	f.credit_accepted, f.credit_value,
	f.credit_limit, f.credit_bytes, f.qp, f.qp_ent, f.qp_dqpn, f.integrity_key, f.integrity_seq,
	f.ignored, f.forwarded,
}

local ex = {
	malformed = ProtoExpert.new("longhaul.rsvp.malformed", "Malformed RSVP message",
		expert.group.MALFORMED, expert.severity.ERROR),
	foreign = ProtoExpert.new("longhaul.rsvp.foreign",
		"Vendor-private object of another enterprise (not longhaul's)", expert.group.PROTOCOL,
		expert.severity.NOTE),
}
p.experts = { ex.malformed, ex.foreign }

-- The reason names are rsvp_err_name()'s, the agent's counters
local function malformed(tree, pinfo, mtype, name, why)
	tree:add_proto_expert_info(ex.malformed, "Malformed RSVP message (" .. name .. "): " .. why)
	pinfo.cols.info:set(short_names[mtype] .. " [Malformed: " .. name .. ", " .. why .. "]")
end

local function ip_string(tvb, off, v6)
	if v6 then
		return tostring(tvb(off, 16):ipv6())
	end
	return tostring(tvb(off, 4):ipv4())
end

-- RFC 2205's checksum: one's complement sum of the message, all ones when right
local function ones_sum(tvb, off, len)
	local sum = 0
	for i = 0, len - 2, 2 do
		sum = sum + tvb(off + i, 2):uint()
	end
	while sum > 0xffff do
		sum = band(sum, 0xffff) + rshift(sum, 16)
	end
	return sum
end

local function contains(list, x)
	for _, v in ipairs(list) do
		if v == x then
			return true
		end
	end
	return false
end

-- the Credit object's bytes: credit << unit, nil when it does not fit 64 bits
local function credit_bytes(credit, unit)
	if unit > 32 and rshift(credit, 64 - unit) ~= 0 then
		return nil
	end
	return UInt64(credit):lshift(unit)
end

local function dissect_cbfc(tvb, pinfo, root)
	local len = tvb:len()
	if len < 8 then
		return
	end
	local vers, mtype = rshift(tvb(0, 1):uint(), 4), tvb(1, 1):uint()
	local rule = rules[mtype]
	if vers ~= 1 or not rule then
		return -- not one of ours: the built-in dissector has said all there is
	end
	local tree = root:add(p, tvb())
	tree:add(f.msg_type, tvb(1, 1))
	local name = msg_names[mtype]
	tree:append_text(": " .. name)
	pinfo.cols.protocol:set("RSVP-CBFC")

	-- the checks of rsvp_decode(), in its order; the first failure ends the walk
	local mlen = tvb(6, 2):uint()
	tree:add(f.length, tvb(6, 2))
	if mlen < 8 then
		return malformed(tree, pinfo, mtype, "len_short", "RSVP length below the common header")
	elseif mlen % 4 ~= 0 then
		return malformed(tree, pinfo, mtype, "len_align", "RSVP length not a multiple of 4")
	elseif mlen > len then
		return malformed(tree, pinfo, mtype, "len_overrun", "RSVP length beyond the bytes received")
	end
	local csum = tvb(2, 2):uint()
	tree:add(f.checksum, tvb(2, 2))
	if csum ~= 0 then
		local good = ones_sum(tvb, 0, mlen) == 0xffff
		tree:add(f.checksum_good, tvb(2, 2), good):set_generated()
		if not good then
			return malformed(tree, pinfo, mtype, "checksum", "checksum wrong")
		end
	end

	local seen, v6, ignored, forwarded = {}, nil, 0, 0
	local src, dst, dqpn, hop, lih, credit
	local off = 8
	while off < mlen do
		local olen, cls, ctype = tvb(off, 2):uint(), tvb(off + 2, 1):uint(), tvb(off + 3, 1):uint()
		local where = string.format("object at %d, class %d C-Type %d", off, cls, ctype)
		if olen < 4 then
			return malformed(tree, pinfo, mtype, "obj_len_min", where .. ": length below 4")
		elseif olen % 4 ~= 0 then
			return malformed(tree, pinfo, mtype, "obj_len_align", where .. ": length not a multiple of 4")
		elseif olen > mlen - off then
			return malformed(tree, pinfo, mtype, "obj_overrun", where .. ": runs past the end of the message")
		end
		local shape = shapes[cls]
		if shape and (cls == CLASS_CREDIT or cls == CLASS_RDMA_QP) and
			(olen < 8 or tvb(off + 4, 4):uint() ~= LH_ENTERPRISE) then
			tree:add_proto_expert_info(ex.foreign)
			shape = nil
		end
		if not shape then
			-- RFC 2205 section 3.10: the Class-Num's top bits say what to do
			if band(cls, 0xc0) == 0x80 then
				ignored = ignored + 1
			elseif band(cls, 0xc0) == 0xc0 then
				forwarded = forwarded + 1
			else
				return malformed(tree, pinfo, mtype, "unknown_class", where .. ": unknown class (0bbbbbbb)")
			end
		else
			if ctype < 1 or ctype > #shape then
				return malformed(tree, pinfo, mtype, "unknown_ctype", where .. ": unknown C-Type")
			elseif olen ~= shape[ctype] and not (cls == CLASS_CREDIT and olen == CREDIT_ACC_LEN) then
				return malformed(tree, pinfo, mtype, "obj_size", where .. ": wrong length for the C-Type")
			elseif seen[cls] then
				return malformed(tree, pinfo, mtype, "dup_object", where .. ": appears twice")
			elseif cls ~= CLASS_INTEGRITY and not contains(rule.must, cls) and not contains(rule.may, cls) then
				return malformed(tree, pinfo, mtype, "not_allowed", where .. ": not allowed in a " .. name)
			end
			seen[cls] = true
			if #shape == 2 then
				local is6 = ctype == 2
				if v6 ~= nil and v6 ~= is6 then
					return malformed(tree, pinfo, mtype, "family", where .. ": IPv4 and IPv6 objects mixed")
				end
				v6 = is6
			end
			local a = v6 and 16 or 4
			local c = off + 4
			if cls == 1 then
				dst = ip_string(tvb, c, v6)
				if tvb(c + a, 1):uint() ~= 17 or tvb(c + a + 2, 2):uint() ~= 4791 then
					return malformed(tree, pinfo, mtype, "not_rdma", "SESSION is not UDP port 4791")
				end
			elseif cls == 3 then
				hop, lih = ip_string(tvb, c, v6), tvb(c + a, 4)
			elseif cls == 10 or cls == 11 then
				src = ip_string(tvb, c, v6)
			elseif cls == CLASS_CREDIT then
				local ct = tree:add(f.credit, tvb(off, olen))
				ct:set_text("Credit object")
				ct:add(f.credit_ent, tvb(c, 4))
				ct:add(f.credit_unit, tvb(c + 4, 1))
				local fl = ct:add(f.credit_flags, tvb(c + 5, 1))
				fl:add(f.credit_init, tvb(c + 5, 1))
				fl:add(f.credit_hb, tvb(c + 5, 1))
				fl:add(f.credit_probe, tvb(c + 5, 1))
				ct:add(f.credit_value, tvb(c + 8, 4))
				ct:add(f.credit_limit, tvb(c + 12, 8))
				local unit, value = tvb(c + 4, 1):uint(), tvb(c + 8, 4):uint()
				if unit > UNIT_MAX then
					return malformed(tree, pinfo, mtype, "obj_value", "Credit unit above 2^40")
				end
				local bytes = credit_bytes(value, unit)
				if bytes then
					ct:add(f.credit_bytes, tvb(c + 8, 4), bytes):set_generated()
				end
				local flags = tvb(c + 5, 1):uint()
				credit = string.format("credit %d x 2^%d B", value, unit)
				if band(flags, 1) ~= 0 then
					credit = credit .. " (initial)"
				end
				if band(flags, 2) ~= 0 then
					credit = credit .. " (heartbeat)"
				end
				if band(flags, 4) ~= 0 then
					credit = credit .. " (probe)"
				end
				ct:append_text(": " .. credit .. ", limit " .. tostring(tvb(c + 12, 8):uint64()))
				if olen == CREDIT_ACC_LEN then
					ct:add(f.credit_accepted, tvb(c + 20, 8))
					ct:append_text(", accepted " .. tostring(tvb(c + 20, 8):uint64()))
					credit = credit .. ", accepted " .. tostring(tvb(c + 20, 8):uint64())
				end
			elseif cls == CLASS_INTEGRITY then
				-- the digest is checked by whoever holds the key (rsvp_verify()), not here
				local key = UInt64(tvb(c + 4, 4):uint(), tvb(c + 2, 2):uint())
				tree:add(f.integrity_key, tvb(c + 2, 6), key)
				tree:add(f.integrity_seq, tvb(c + 8, 8))
			elseif cls == CLASS_RDMA_QP then
				local qt = tree:add(f.qp, tvb(off, olen))
				qt:set_text("RDMA_QP object")
				qt:add(f.qp_ent, tvb(c, 4))
				qt:add(f.qp_dqpn, tvb(c + 5, 3))
				dqpn = tvb(c + 5, 3):uint()
				qt:append_text(string.format(": destination QP 0x%06x", dqpn))
			end
		end
		off = off + olen
	end
	for _, cls in ipairs(rule.must) do
		if not seen[cls] then
			return malformed(tree, pinfo, mtype, "missing", class_names[cls] .. " missing")
		end
	end
	if ignored > 0 then
		tree:add(f.ignored, ignored):set_generated()
	end
	if forwarded > 0 then
		tree:add(f.forwarded, forwarded):set_generated()
	end
	if src then
		tree:add(f.flow_src, src):set_generated()
	end
	tree:add(f.flow_dst, dst):set_generated()
	if dqpn then
		tree:add(f.flow_dqpn, dqpn):set_generated()
	end
	if hop then
		tree:add(f.hop, hop):set_generated()
		tree:add(f.lih, lih)
	end
	local summary = string.format("%s -> %s", src or "?", dst)
	if dqpn then
		summary = summary .. string.format(" QP 0x%06x", dqpn)
	end
	if hop then
		summary = summary .. string.format(", hop %s path %d", hop, lih:uint())
	end
	if credit then
		summary = summary .. ", " .. credit
	end
	tree:append_text(", " .. summary)
	pinfo.cols.info:set(short_names[mtype] .. ": " .. summary)
end

-- Take IP protocol 46 from the built-in RSVP dissector and call it first
local ip_proto = DissectorTable.get("ip.proto")
local builtin = ip_proto:get_dissector(46)

function p.dissector(tvb, pinfo, root)
	if builtin then
		builtin:call(tvb, pinfo, root)
	end
	dissect_cbfc(tvb, pinfo, root)
	return tvb:len()
end

ip_proto:add(46, p)
